// The demo's conversations, kept in IndexedDB (database `webgpu-responses-demo`, apart from the runtime's response
// store) through `idb`: what the page shows (messages with their parts) and what it needs to continue each one
// (the head of the stored chain, or the items it resends itself when history is not stored).
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';

export interface Part {
  kind: 'reasoning' | 'text' | 'tool' | 'note';
  text: string;
  /** For text: the message's phase ('commentary' | 'final_answer'). */
  phase?: string | null;
  /** For tool: the tool's name and what it returned. */
  name?: string;
  output?: string;
  error?: boolean;
}

export interface Message {
  role: 'user' | 'assistant';
  text?: string;
  parts?: Part[];
  state?: 'generating' | 'done' | 'stopped' | 'error';
}

export interface Conversation {
  id: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  messages: Message[];
  /** The conversation as input items (user messages, output items, tool outputs): resent with store:false. */
  items: unknown[];
  /** The last stored response of the chain (store:true), or null. */
  previousResponseId: string | null;
  /** The demo file that apply_patch edits, as this conversation left it. */
  file: string;
  /** The file's text as last sent to the model (a developer message), so it is sent again only after a change. */
  fileSent?: string;
}

interface DemoDB extends DBSchema {
  conversations: { key: string; value: Conversation; indexes: { updatedAt: number } };
}

export const DEMO_DB_NAME = 'webgpu-responses-demo';

let db: Promise<IDBPDatabase<DemoDB>> | null = null;
function open(): Promise<IDBPDatabase<DemoDB>> {
  db ??= openDB<DemoDB>(DEMO_DB_NAME, 1, {
    upgrade(database) {
      const store = database.createObjectStore('conversations', { keyPath: 'id' });
      store.createIndex('updatedAt', 'updatedAt');
    },
  });
  return db;
}

/** Every conversation, the most recently used first. */
export async function listConversations(): Promise<Conversation[]> {
  const all = await (await open()).getAllFromIndex('conversations', 'updatedAt');
  return all.reverse();
}

export async function saveConversation(conversation: Conversation): Promise<void> {
  // A structured clone of plain data (the live object may hold nothing else, but be safe about proxies).
  await (await open()).put('conversations', JSON.parse(JSON.stringify(conversation)) as Conversation);
}

export async function deleteConversation(id: string): Promise<void> {
  await (await open()).delete('conversations', id);
}

export function newConversation(file: string): Conversation {
  const now = Date.now();
  return { id: `c${now.toString(36)}${Math.random().toString(36).slice(2, 8)}`, title: 'New chat', createdAt: now, updatedAt: now, messages: [], items: [], previousResponseId: null, file };
}
