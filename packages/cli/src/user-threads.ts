/**
 * The threads of one user. The command saves thread `N` of user `U` under the checkpoint key
 * `U~N` (thread names cannot hold `~`; user names may, the last `~` ends them), so every user
 * has threads of their own: another user's thread is not listed, shown, resumed or run, and
 * asking for one answers exactly as for a thread that does not exist — nothing tells whether it
 * does. Threads saved before threads had owners (keys without `~`) belong to the OS login's
 * default user only, the user every earlier command ran as unless told otherwise.
 * @module
 */
import { userInfo } from "node:os";
import { type Checkpoint, type Checkpointer, type ThreadInfo, checkThreadId, validateNamespace } from "engram/kit";
import { defaultUserId } from "./config.js";

/** Ends the owner's name in a checkpoint key. */
export const OWNER_MARK = "~";

/** The longest store namespace component (a thread's key names one). */
const MAX_KEY = 128;

/** A saved thread of the user: `threadId` is its name, `key` its checkpoint key. */
export interface UserThread extends ThreadInfo {
  key: string;
}

/** The OS login's name, as the configuration finds it for its default user. */
function loginName(env: NodeJS.ProcessEnv): string {
  let name = "";
  try {
    name = userInfo().username;
  } catch {
    // No passwd entry (containers): the environment says.
  }
  return name || env.USER || env.USERNAME || "default";
}

/** The threads `user` may see and use. */
export class UserThreads {
  constructor(
    readonly user: string,
    /** Whether threads saved without an owner are this user's. */
    readonly ownsUnowned: boolean,
  ) {}

  /** The threads of the configured user; unowned ones are the OS login's default user's. */
  static of(user: string, env: NodeJS.ProcessEnv = process.env): UserThreads {
    return new UserThreads(user, user === defaultUserId(loginName(env)));
  }

  /** The checkpoint key of this user's thread `id`. */
  key(id: string): string {
    return `${this.user}${OWNER_MARK}${id}`;
  }

  /** The thread name of checkpoint `key` when it is this user's thread, else `undefined`. */
  idOf(key: string): string | undefined {
    const mark = key.lastIndexOf(OWNER_MARK);
    if (mark < 0) return this.ownsUnowned ? key : undefined;
    return key.slice(0, mark) === this.user ? key.slice(mark + 1) : undefined;
  }

  /** Why `id` cannot name a thread of this user (`undefined` when it can): it names a store
   * namespace component (the thread's files), and so does its key. */
  problem(id: string): string | undefined {
    try {
      checkThreadId(id);
      validateNamespace(["engram", "threads", id, "files"]);
    } catch (e) {
      return (e as Error).message;
    }
    if (id.includes(OWNER_MARK)) return `a thread name cannot contain "${OWNER_MARK}"`;
    const most = MAX_KEY - this.user.length - OWNER_MARK.length;
    if (id.length > most) return `a thread name of user ${this.user} has at most ${Math.max(0, most)} characters`;
    return undefined;
  }

  /** This user's saved thread `id` (an unowned one, for its owner), or `undefined`. */
  async find(checkpointer: Checkpointer, id: string): Promise<{ key: string; checkpoint: Checkpoint } | undefined> {
    if (id.includes(OWNER_MARK)) return undefined;
    const keys = this.ownsUnowned ? [this.key(id), id] : [this.key(id)];
    for (const key of keys) {
      const checkpoint = await checkpointer.get(key);
      if (checkpoint) return { key, checkpoint };
    }
    return undefined;
  }

  /** The key a run of thread `id` uses: the saved thread's, else a new one of this user. */
  async keyFor(checkpointer: Checkpointer, id: string): Promise<string> {
    return (await this.find(checkpointer, id))?.key ?? this.key(id);
  }

  /** This user's saved threads (`threadId`: the thread's name), in key order. */
  async list(checkpointer: Checkpointer): Promise<UserThread[]> {
    if (!checkpointer.list) return [];
    const threads: UserThread[] = [];
    let cursor: string | undefined;
    do {
      const page = await checkpointer.list({ limit: 500, ...(cursor !== undefined && { cursor }) });
      for (const t of page.threads) {
        const id = this.idOf(t.threadId);
        if (id !== undefined) threads.push({ ...t, threadId: id, key: t.threadId });
      }
      cursor = page.cursor;
    } while (cursor !== undefined);
    return threads;
  }
}
