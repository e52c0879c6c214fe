// Type declarations for the npm package diagrelay. No dependency on
// @types/node: an extension can use them with nothing else installed.

/** The topic an extension emits to ask whether a live host is there. */
export declare const PROBE_TOPIC: "pi-subagent-manager:diagnostic:probe";
/** The topic an extension emits a report on. */
export declare const REPORT_TOPIC: "pi-subagent-manager:diagnostic";
/** Reports sent and not yet answered, at most; past it a report is dropped. */
export declare const MAX_UNANSWERED: 1000;
/** The first release with child diagnostics: the default minimum version. */
export declare const MIN_VERSION: "1.1.0";
/** The service's frame limit in bytes, newline excluded. */
export declare const MAX_FRAME: 65536;
/** close's default bound in milliseconds. */
export declare const CLOSE_TIMEOUT: 2000;

/**
 * The binary in the order `bin`, DIAGRELAY_BIN, the platform package
 * (`@diagrelay/<platform>-<arch>`), `diagrelay` on PATH. Throws an error with
 * code "ERR_DIAGRELAY_NO_BINARY" naming what was tried and what to install.
 */
export declare function findBinary(options?: { bin?: string; env?: Record<string, string | undefined> }): string;

/** pi's event bus as extensions see it (`pi.events`): there is no `off`. */
export interface EventBus {
  /** Subscribes; the returned function unsubscribes. */
  on(topic: string, handler: (data: unknown) => void): () => void;
  emit(topic: string, data: unknown): void;
}

export type Level = "info" | "warning" | "error";

/** What the probe answers: `respond` receives it synchronously. */
export interface Capability {
  version: string;
  protocol: number;
}

/** The payload of PROBE_TOPIC, as the original documents it. */
export interface ProbeRequest {
  respond: (capability: Capability) => void;
}

/** The payload of REPORT_TOPIC, as the original documents it. */
export interface Report {
  level: Level;
  message: string;
  source?: string;
}

/** The service's answer to session.hello. */
export interface SessionInfo {
  role: "child";
  path: string;
  generation: number;
}

export interface ChildOptions {
  /** The service's Unix socket; default `DIAGRELAY_SOCKET`. */
  socket?: string;
  /** This runtime's token (surrounding whitespace ignored); default `DIAGRELAY_TOKEN`. */
  token?: string;
  /** Milliseconds for connect, hello and probe together; default 2000. */
  timeout?: number;
}

export interface BridgeOptions extends ChildOptions {
  /** Resolve to null instead of rejecting when the session is not hosted. */
  optional?: boolean;
}

/** The error a call rejects with when the service answers with an error. */
export declare class RPCError extends Error {
  /** The JSON-RPC error code (-32001 unknown token, -32003 revoked, -32602 bad params, …). */
  readonly code: number;
  readonly method: string;
}

/**
 * Errors that are not the service's answer carry a string code:
 * "ERR_DIAGRELAY_NOT_HOSTED" (no socket or token), "ERR_DIAGRELAY_CLOSED"
 * (the connection was lost), "ERR_DIAGRELAY_EXITED" (the service exited),
 * "ETIMEDOUT", or the socket's own ("ENOENT", "ECONNREFUSED", …).
 */
export interface DiagrelayError extends Error {
  code: string;
}

export declare class Bridge {
  private constructor();
  /** Reports not forwarded: over the bound, or emitted after the connection was lost. */
  readonly dropped: number;
  /** Reports the service answered with an error (an invalid report). */
  readonly refused: number;
  /** Reports forwarded whose answer never came because the connection was lost. */
  readonly unanswered: number;
  /** The service's answer to session.hello. */
  readonly session: SessionInfo;
  /** The capability the probe answers with (the service's diagnostic.probe reply). */
  readonly capability: Capability;
  /** Whether the probe answers "hosted". */
  readonly connected: boolean;
  /** The connection was lost or the token revoked, or an extension's respond threw. */
  on(event: "error", listener: (err: Error) => void): this;
  /** The service answered a forwarded report with an error. */
  on(event: "refused", listener: (err: RPCError) => void): this;
  off(event: "error" | "refused", listener: (...args: any[]) => void): this;
  /** Resolves when every report forwarded so far has its answer. */
  flush(): Promise<void>;
  /**
   * Stops answering the probe at once, waits for the answers of the reports
   * already forwarded (at most timeout ms, default 2000), unsubscribes and
   * closes; what is unanswered at the bound is counted and the socket destroyed.
   */
  close(options?: { timeout?: number }): Promise<void>;
  /** Ends at once: unsubscribes, counts what is unanswered, destroys the socket. */
  destroy(): void;
}

/**
 * Connects to the service, says hello, asks diagnostic.probe, and only then
 * installs on `events` the probe responder and the report forwarder.
 * Rejects with an RPCError (a refused token) or a DiagrelayError; never hangs.
 */
export declare function bridgeChildBus(events: Pick<EventBus, "on">, options: BridgeOptions & { optional: true }): Promise<Bridge | null>;
export declare function bridgeChildBus(events: Pick<EventBus, "on">, options?: BridgeOptions): Promise<Bridge>;

export declare class Child {
  private constructor();
  readonly session: SessionInfo;
  /** The service's diagnostic.probe reply at connect time, as it came. */
  readonly capability: Capability;
  /** Asks again: the capability if protocol 1 and version >= minVersion (default 1.1.0), else null. */
  probe(minVersion?: string): Promise<Capability | null>;
  /** Resolves once the service took the report (a policy drop looks the same). */
  report(level: Level, message: string, source?: string): Promise<void>;
  close(): Promise<void>;
}

export declare function connectChild(options?: ChildOptions): Promise<Child>;

export type Mode = "tui" | "rpc" | "print";

export interface HostOptions {
  /** The data directory (mailbox.db, host.token); with neither data nor socket, a private one, removed when the service exits. */
  data?: string;
  /** The Unix socket for children; default `<data>/diagrelay.sock`. Keep it under 108 bytes. */
  socket?: string;
  /** The parent session's mode; default the service's ("rpc"). */
  mode?: Mode;
  /** The binary; default `DIAGRELAY_BIN`, else the platform package, else `diagrelay` on PATH. */
  bin?: string;
  /** Milliseconds to wait for the socket to listen; default 10000. */
  timeout?: number;
  /** "pipe" (default) keeps the service's log for error messages; "inherit" shows it. */
  stderr?: "pipe" | "inherit";
  /** Bind every child token to its process and descendants (`serve --bind-peer`); `open(…, {bind: false})` opts out. */
  bindPeer?: boolean;
  /** "off": no host token is written, the host is this stdio peer alone (`serve --host-socket off`). Default "on". */
  hostSocket?: "on" | "off";
}

export interface OpenOptions {
  parent?: string;
  owner?: string;
  /** Bind the token to the first process that says hello with it and its descendants; default the service's (`bindPeer`). */
  bind?: boolean;
}

/** A bound token's process (docs/protocol.md, "Bound tokens"). */
export interface Peer {
  pid: number;
  uid: number;
  /** The executable's real path, sanitized as a source is; "" when the system does not say. */
  exe: string;
}

export interface Runtime {
  path: string;
  token: string;
  generation: number;
}

export interface Diagnostic {
  level: Level;
  source: string;
  message: string;
  /** RFC 3339 time. */
  at: string;
}

export interface Dropped {
  duplicate: number;
  rate: number;
  cap: number;
  invalid: number;
}

export interface ThreadStatus {
  path: string;
  parent: string;
  owner: string;
  open?: boolean;
  generation?: number;
  diagnostics: Diagnostic[];
  dropped: Dropped;
  /** Secrets redacted from the thread's delivered reports, by rule id ({} when none). */
  redacted: Record<string, number>;
  /** The bound process of the latest generation, once it said hello. */
  peer?: Peer;
  /** RFC 3339 time the bound process exited; absent while it lives. */
  exited?: string;
  /** Hellos the token's binding refused, over all generations; absent while 0. */
  peer_refused?: number;
  [extra: string]: unknown;
}

export interface ThreadSummary {
  path: string;
  parent: string;
  owner: string;
  open: boolean;
  generation: number;
  /** How many diagnostics the thread holds (at most 20). */
  diagnostics: number;
  dropped: Dropped;
  /** Secrets redacted from the thread's delivered reports, by rule id. */
  redacted: Record<string, number>;
  peer?: Peer;
  exited?: string;
  peer_refused?: number;
}

export interface MailboxMessage {
  id: number;
  recipient: string;
  from: string;
  /** The labeled parent message. */
  text: string;
  level: Level;
  source: string;
  message: string;
  at: string;
}

export interface Notification {
  thread: string;
  message: string;
  notifyType: Level;
}

/** An `event` notification after subscribe(). */
export interface ServiceEvent {
  kind: "opened" | "reopened" | "closed" | "delivered" | "dropped" | "notified" | "held" | "lost" | "exited";
  /** "" for the summary of held-back notifications. */
  thread: string;
  at: string;
  /** opened, reopened */
  parent?: string;
  owner?: string;
  /** opened, reopened, closed, exited */
  generation?: number;
  /** delivered */
  level?: Level;
  source?: string;
  message?: string;
  reason?: "duplicate" | "rate" | "cap" | "invalid";
  /** delivered: secrets redacted from this report, by rule id (absent when none) */
  redacted?: Record<string, number>;
  notifyType?: Level;
  count?: number;
  [extra: string]: unknown;
}

export declare class Host {
  private constructor();
  /** Spawns `diagrelay serve --stdio --socket … --data …`; resolves once the socket listens. */
  static start(options: HostOptions): Promise<Host>;
  readonly pid: number;
  readonly socket: string;
  readonly data: string | undefined;
  /** The service's capabilities.probe answer when it started. */
  readonly capability: Capability | undefined;
  /** The exit status once the service exited, else null. */
  readonly exitStatus: { code: number | null; signal: string | null } | null;
  /** Opens a runtime; on an open path, reopens it (fresh limits, old token revoked). */
  open(path: string, options?: OpenOptions): Promise<Runtime>;
  close(path: string): Promise<void>;
  status(path: string): Promise<ThreadStatus>;
  threads(): Promise<ThreadSummary[]>;
  /** Unacknowledged messages, oldest first, at most limit (default 1000). */
  readMailbox(recipient: string, limit?: number): Promise<MailboxMessage[]>;
  /** Resolves with how many were acknowledged. */
  ack(recipient: string, ids: number[]): Promise<number>;
  subscribe(): Promise<void>;
  /** Any host method, for what the typed ones do not cover. */
  call(method: string, params?: Record<string, unknown>): Promise<unknown>;
  on(event: "notify", listener: (n: Notification) => void): this;
  on(event: "event", listener: (e: ServiceEvent) => void): this;
  on(event: "exit", listener: (code: number | null, signal: string | null) => void): this;
  off(event: "notify" | "event" | "exit", listener: (...args: any[]) => void): this;
  /** The environment a child needs: DIAGRELAY_SOCKET and DIAGRELAY_TOKEN. */
  childEnv(token: string): { DIAGRELAY_SOCKET: string; DIAGRELAY_TOKEN: string };
  /**
   * A spawn token for threads strictly below path, usable only by this Host's
   * process and its descendants (`spawn.open`, docs/protocol.md "Spawn tokens").
   */
  spawnToken(path: string): Promise<{ path: string; token: string }>;
  /** SIGTERM, resolves after the process exited (SIGKILL after timeout ms, default 10000). */
  stop(options?: { timeout?: number }): Promise<void>;
}
