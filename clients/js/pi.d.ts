// Type declarations for `diagrelay/pi`: the Host of a pi process for
// subagent extensions (docs/pi.md). Structural types only: no dependency on
// either pi package (@earendil-works/pi-coding-agent, @mariozechner/pi-coding-agent).
import type { Bridge, EventBus, ThreadStatus, ThreadSummary } from "./index.js";

/** The absolute path of the child extension (what PiChild.args loads). */
export declare const CHILD_EXTENSION: string;
/** The absolute path of the extension for in-process children (first in pi-subagents' `subagents.defaultExtensions`). */
export declare const INPROC_EXTENSION: string;
/** The customType of the messages given to the agent. */
export declare const MESSAGE_TYPE: "diagrelay";
/** The topic of the host probe: `pi.events.emit(HOST_PROBE_TOPIC, {respond(host) {…}})` answers synchronously. */
export declare const HOST_PROBE_TOPIC: "diagrelay:host:probe";
/** The package's version (what PiHost.version says). */
export declare const VERSION: string;

/** The part of pi's ExtensionAPI this module uses. */
export interface PiLike {
  events: EventBus;
  sendMessage(message: { customType: string; content: string; display: boolean }, options?: { deliverAs?: "steer" | "followUp" | "nextTurn" }): void;
}

/** A thread's status; once the service is gone, the last one known with `stale: true`. */
export type PiThreadStatus = ThreadStatus & { stale?: true };

export declare class PiChild {
  private constructor();
  /** The child's thread path. */
  readonly path: string;
  /** The variables to add to the child's environment. */
  readonly env: { DIAGRELAY_SOCKET: string; DIAGRELAY_TOKEN: string };
  /** `["-e", CHILD_EXTENSION]`: put them first on the child's `pi` command line. */
  readonly args: string[];
  /** What an agent_status shows: the 20 newest diagnostics and the drop counts. Never rejects. */
  status(): Promise<PiThreadStatus>;
  /** Bridges the bus of a child session created in this process (pi's SDK); null once the service is gone. */
  attach(events: Pick<EventBus, "on">): Promise<Bridge | null>;
  /** Closes the attached bridges, then the runtime. Never rejects. */
  close(): Promise<void>;
}

export interface RunOptions {
  /** The child's working directory (default: this process's). */
  cwd?: string;
  /** Variables added to this process's environment for the child (the thread's come on top). */
  env?: Record<string, string | undefined>;
  /** Aborting sends the child SIGTERM, and SIGKILL 5 s later. */
  signal?: AbortSignal;
  /** Each line of the child's stdout as it comes (for `--mode json`). */
  onLine?: (line: string) => void;
  /** Passed to open. */
  parent?: string;
  owner?: string;
  /** The pi to run (default: this process's own, `process.execPath` with `process.argv[1]`). */
  command?: { command: string; args: string[] };
}

export interface RunResult {
  /** The thread's path. */
  path: string;
  /** The child's exit code, or null when it was killed by a signal or could not start. */
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** Characters of stdout and stderr past the 16 Mi kept of each. */
  truncated: number;
  /** The thread's last status after the child exited (null when not hosted). */
  status: PiThreadStatus | null;
  /** False when no thread could be opened: the child ran unhosted. */
  hosted: boolean;
  /** Why the child could not start, or why it ran unhosted. */
  error?: string;
}

export interface PiHost {
  /** The package's version. */
  readonly version: string;
  readonly protocol: 1;
  /**
   * Opens (or reopens) a child runtime. In a hosted child: strictly below the child's own path.
   * Rejects (code ERR_DIAGRELAY_NOT_HOSTED) where no session with a UI owns the process.
   * `bind`: the token belongs to the first process that says hello with it (the spawned child) and its descendants.
   */
  open(path: string, options?: { parent?: string; owner?: string; bind?: boolean }): Promise<PiChild>;
  /** Runs a child pi under path: stdin ignored, output captured, the thread closed after; never rejects. */
  run(path: string, args: string[], options?: RunOptions): Promise<RunResult>;
  /** The session's threads (top-level session only). */
  threads(): Promise<ThreadSummary[]>;
}

/** What the host probe's respond receives: the same object hostFor returns. */
export interface HostProbeRequest {
  respond(host: PiHost): void;
}

/** The Host of this pi process, as the parent extension uses it. */
export declare function hostFor(pi?: PiLike): PiHost;
