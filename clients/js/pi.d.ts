// Type declarations for `diagrelay/pi`: the Host of a pi process for
// subagent extensions (SPEC §11.3). Structural types only: no dependency on
// pi's own packages.
import type { Bridge, EventBus, ThreadStatus, ThreadSummary } from "./index.js";

/** The absolute path of the child extension (what PiChild.args loads). */
export declare const CHILD_EXTENSION: string;
/** The customType of the messages given to the agent. */
export declare const MESSAGE_TYPE: "diagrelay";

/** The part of pi's ExtensionAPI this module uses. */
export interface PiLike {
  events: EventBus;
  sendMessage(message: { customType: string; content: string; display: boolean }, options?: { deliverAs?: "steer" | "followUp" | "nextTurn" }): void;
}

export declare class PiChild {
  private constructor();
  /** The child's thread path. */
  readonly path: string;
  /** The variables to add to the child's environment. */
  readonly env: { DIAGRELAY_SOCKET: string; DIAGRELAY_TOKEN: string };
  /** `["-e", CHILD_EXTENSION]`: put them first on the child's `pi` command line. */
  readonly args: string[];
  /** What an agent_status shows: the 20 newest diagnostics and the drop counts. */
  status(): Promise<ThreadStatus>;
  /** Bridges the bus of a child session created in this process (pi's SDK). */
  attach(events: Pick<EventBus, "on">): Promise<Bridge>;
  /** Closes the attached bridges, then the runtime. */
  close(): Promise<void>;
}

export interface PiHost {
  /** Opens (or reopens) a child runtime. In a hosted child: strictly below the child's own path. */
  open(path: string, options?: { parent?: string; owner?: string }): Promise<PiChild>;
  /** The session's threads (top-level session only). */
  threads(): Promise<ThreadSummary[]>;
}

/** The Host of this pi process, as the parent extension uses it. */
export declare function hostFor(pi: PiLike): PiHost;
