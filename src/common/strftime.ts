// strftime for the chat templates' strftime_now and for the prompts the runtime renders itself (harmony.ts): the
// formats real templates use, in local time, with English month names in every locale.

/** strftime as @huggingface/jinja's strftime_now formats (%Y %m %d %b %B %H %M %%). */
export function strftime(date: Date, format: string): string {
  const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));
  return format.replace(/%[YmdbBHM%]/g, (token) => {
    switch (token) {
      case '%Y':
        return String(date.getFullYear());
      case '%m':
        return pad2(date.getMonth() + 1);
      case '%d':
        return pad2(date.getDate());
      // English month names whatever the browser's language: Python's strftime in the C locale, as the templates
      // were written and the models trained ("Today Date: 02 Dec 2026", never "02 Dez. 2026").
      case '%b':
        return new Intl.DateTimeFormat('en-US', { month: 'short' }).format(date);
      case '%B':
        return new Intl.DateTimeFormat('en-US', { month: 'long' }).format(date);
      case '%H':
        return pad2(date.getHours());
      case '%M':
        return pad2(date.getMinutes());
      default:
        return '%';
    }
  });
}
