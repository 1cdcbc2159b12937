/**
 * Counts the billable platform operations the Worker performs, for `npm run bench -- ops`.
 * Runs inside workerd, wrapped around the real Worker and its Durable Object classes by a
 * bench-only entry module (see bench/ops.ts) — nothing of it ships in the production Worker.
 *
 * What Cloudflare bills, and how each is counted here:
 * - Worker requests: every fetch and every queue batch the Worker is invoked for.
 * - D1: rows read and rows written, from the `meta` D1 returns with each query.
 * - Durable Objects: requests (RPC calls, fetches, alarms); wall time per request as a proxy for duration.
 * - Queues: one operation per message written, read (delivered) and deleted (acknowledged).
 * - R2: class A (put, multipart create/part/complete, list), class B (get, head); delete is free.
 * - Durable Object storage (SQLite-backed objects, billed since January 2026 like D1: rows read
 *   and rows written): its key-value API keeps one row per key, so a key read is a row read and
 *   a key put or deleted a row written; setting or deleting an alarm is a row written.
 * https://developers.cloudflare.com/workers/platform/pricing/
 */

type Counts = Record<string, number>;
const counts: Counts = {};

/** Every counted operation in order, labelled (request path, SQL, method): the profile behind the counts. */
const trace: string[] = [];

function add(name: string, by = 1, label?: string): void {
  counts[name] = (counts[name] ?? 0) + by;
  if (label !== undefined) trace.push(`${name.replace(/\.(requests|written|delivered)$/, "")} ${label}`);
}

export function snapshot(): { [name: string]: number | string[] } {
  return { ...counts, trace: [...trace] };
}

export function reset(): void {
  for (const name of Object.keys(counts)) delete counts[name];
  trace.length = 0;
}

function addD1Meta(meta: { rows_read?: number; rows_written?: number } | undefined, sql = "?"): void {
  add("d1.queries", 1, `${sql.replace(/\s+/g, " ").slice(0, 70)} (read ${meta?.rows_read ?? 0}, written ${meta?.rows_written ?? 0})`);
  add("d1.rows_read", meta?.rows_read ?? 0);
  add("d1.rows_written", meta?.rows_written ?? 0);
}

const realStatements = new WeakMap<object, D1PreparedStatement>();
const statementSql = new WeakMap<object, string>();

function meterStatement(statement: D1PreparedStatement, sql: string): D1PreparedStatement {
  const metered = new Proxy(statement, {
    get(target, property) {
      switch (property) {
        case "bind":
          return (...values: unknown[]) => meterStatement(target.bind(...values), sql);
        case "run":
        case "all":
          return async () => {
            const result = await target[property]();
            addD1Meta(result.meta, sql);
            return result;
          };
        case "first":
          // first() returns no meta: read through all() to count the rows it reads.
          return async (column?: string) => {
            const result = await target.all<Record<string, unknown>>();
            addD1Meta(result.meta, sql);
            const row = result.results[0];
            if (row === undefined) return null;
            return column === undefined ? row : (row[column] ?? null);
          };
        case "raw":
          return async (options?: { columnNames?: boolean }) => {
            const result = await target.all<Record<string, unknown>>();
            addD1Meta(result.meta, sql);
            const rows = result.results.map((row) => Object.values(row));
            return options?.columnNames ? [Object.keys(result.results[0] ?? {}), ...rows] : rows;
          };
        default: {
          const value = Reflect.get(target, property);
          return typeof value === "function" ? value.bind(target) : value;
        }
      }
    },
  });
  realStatements.set(metered, statement);
  statementSql.set(metered, sql);
  return metered;
}

function meterD1(db: D1Database): D1Database {
  return new Proxy(db, {
    get(target, property) {
      if (property === "prepare") return (sql: string) => meterStatement(target.prepare(sql), sql);
      if (property === "batch") {
        return async (statements: D1PreparedStatement[]) => {
          const results = await target.batch(statements.map((statement) => realStatements.get(statement) ?? statement));
          results.forEach((result, i) => addD1Meta(result.meta, `batch: ${statementSql.get(statements[i]!) ?? "?"}`));
          return results;
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

const R2_CLASS_A = new Set(["put", "createMultipartUpload", "list"]);
const R2_CLASS_B = new Set(["get", "head"]);

function meterMultipart<T extends object>(upload: T): T {
  return new Proxy(upload, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== "function") return value;
      if (property === "uploadPart" || property === "complete") add("r2.class_a", 1, `multipart.${String(property)}`);
      return value.bind(target);
    },
  });
}

function meterR2(bucket: R2Bucket): R2Bucket {
  return new Proxy(bucket, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (R2_CLASS_A.has(String(property))) add("r2.class_a", 1, `${String(property)} ${typeof args[0] === "string" ? args[0] : ""}`);
        if (R2_CLASS_B.has(String(property))) add("r2.class_b", 1, `${String(property)} ${typeof args[0] === "string" ? args[0] : ""}`);
        const result = value.apply(target, args);
        if (property === "createMultipartUpload") return (result as Promise<object>).then(meterMultipart);
        if (property === "resumeMultipartUpload") return meterMultipart(result as object);
        return result;
      };
    },
  });
}

function meterQueue(binding: string, queue: Queue): Queue {
  return new Proxy(queue, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (property === "send") add(`queue.${binding}.written`, 1, "send");
        if (property === "sendBatch") add(`queue.${binding}.written`, (args[0] as unknown[]).length, "sendBatch");
        return value.apply(target, args);
      };
    },
  });
}

/** A Durable Object stub whose every call counts as one request to its namespace. */
function meterStub(binding: string, stub: DurableObjectStub): DurableObjectStub {
  return new Proxy(stub, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof property === "symbol" || property === "then" || property === "id" || property === "name" || typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        add(`do.${binding}.requests`, 1, String(property));
        const started = Date.now();
        try {
          // An RPC property is itself a stub: `.apply` would be sent as a remote call.
          return await Reflect.apply(value, target, args);
        } finally {
          add(`do.${binding}.wall_ms`, Date.now() - started);
        }
      };
    },
  });
}

function meterNamespace(binding: string, namespace: DurableObjectNamespace): DurableObjectNamespace {
  return new Proxy(namespace, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== "function") return value;
      if (property === "get" || property === "getByName") return (...args: unknown[]) => meterStub(binding, Reflect.apply(value, target, args));
      return value.bind(target);
    },
  });
}

const meteredEnvs = new WeakMap<object, object>();

/** The same env, its D1, R2, queue and Durable Object bindings counting what they do. */
export function meterEnv<E extends object>(env: E): E {
  const cached = meteredEnvs.get(env);
  if (cached) return cached as E;
  const wrapped: Record<string, unknown> = {};
  for (const [name, binding] of Object.entries(env)) {
    const b = binding as Record<string, unknown> | null;
    if (b && typeof b === "object" && typeof b.prepare === "function" && typeof b.batch === "function") wrapped[name] = meterD1(b as unknown as D1Database);
    else if (b && typeof b === "object" && typeof b.createMultipartUpload === "function") wrapped[name] = meterR2(b as unknown as R2Bucket);
    else if (b && typeof b === "object" && typeof b.sendBatch === "function") wrapped[name] = meterQueue(name, b as unknown as Queue);
    else if (b && typeof b === "object" && typeof b.idFromName === "function") wrapped[name] = meterNamespace(name, b as unknown as DurableObjectNamespace);
    else wrapped[name] = binding;
  }
  meteredEnvs.set(env, wrapped);
  return wrapped as E;
}

/**
 * Makes a Durable Object's storage count the rows its key-value and alarm calls read and write.
 * Patched on the object itself: the runtime accepts only its own state object in a Durable
 * Object's constructor, so the state cannot be wrapped.
 */
function meterStorage(binding: string, storage: DurableObjectStorage): void {
  const rows = (kind: "read" | "written", by: number, label: string) => {
    add(`do.${binding}.storage_calls`, 1, `storage.${label} (${kind} ${by})`);
    add(`do.${binding}.storage_rows_${kind}`, by);
  };
  const counted: Record<string, (args: unknown[], result: unknown) => void> = {
    get: ([first], result) => rows("read", result instanceof Map ? result.size : result === undefined ? 0 : 1, `get ${Array.isArray(first) ? first.join(",") : String(first)}`),
    list: (_args, result) => rows("read", (result as Map<string, unknown>).size, "list"),
    put: ([first]) => rows("written", typeof first === "string" ? 1 : Object.keys(first as object).length, `put ${typeof first === "string" ? first : Object.keys(first as object).join(",")}`),
    delete: ([first], result) => rows("written", typeof result === "number" ? result : result ? 1 : 0, `delete ${Array.isArray(first) ? first.join(",") : String(first)}`),
    setAlarm: () => rows("written", 1, "setAlarm"),
    deleteAlarm: () => rows("written", 1, "deleteAlarm"),
    getAlarm: () => rows("read", 1, "getAlarm"),
  };
  if ((storage as unknown as { __metered?: boolean }).__metered) return;
  for (const [method, count] of Object.entries(counted)) {
    const real = (storage as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[method]!;
    Object.defineProperty(storage, method, {
      value: async (...args: unknown[]) => {
        const result = await real.apply(storage, args);
        count(args, result);
        return result;
      },
    });
  }
  Object.defineProperty(storage, "__metered", { value: true });
}

/** A Durable Object class whose instances see a metered env and storage and count their alarms. */
export function meterClass<C extends new (ctx: DurableObjectState, env: never) => object>(binding: string, Base: C): C {
  const Metered = class extends (Base as new (ctx: DurableObjectState, env: object) => { alarm?: (info?: unknown) => Promise<void> }) {
    constructor(ctx: DurableObjectState, env: object) {
      meterStorage(binding, ctx.storage);
      super(ctx, meterEnv(env));
    }
  };
  if (typeof (Base.prototype as { alarm?: unknown }).alarm === "function") {
    Object.defineProperty(Metered.prototype, "alarm", {
      value: async function (this: { constructor: unknown }, info?: unknown) {
        add(`do.${binding}.requests`, 1, "alarm");
        add(`do.${binding}.alarms`);
        return (Base.prototype as unknown as { alarm: (info?: unknown) => Promise<void> }).alarm.call(this, info);
      },
    });
  }
  return Metered as unknown as C;
}

const COUNTS_PATH = "/__bench/ops";

/** The Worker's handlers with a metered env; GET /__bench/ops reads the counts, DELETE resets them. */
export function meterHandler<E extends object>(handler: ExportedHandler<E>): ExportedHandler<E> {
  return {
    async fetch(request, env, ctx) {
      if (new URL(request.url).pathname === COUNTS_PATH) {
        if (request.method === "DELETE") reset();
        return Response.json(snapshot());
      }
      add("worker.requests", 1, `${request.method} ${new URL(request.url).pathname}`);
      return handler.fetch!(request as never, meterEnv(env), ctx);
    },
    async queue(batch, env, ctx) {
      add("worker.requests", 1, `queue batch ${batch.queue}`);
      add(`queue.${batch.queue}.delivered`, batch.messages.length);
      return handler.queue!(batch, meterEnv(env), ctx);
    },
    async scheduled(controller, env, ctx) {
      add("worker.requests", 1, "scheduled");
      return handler.scheduled!(controller, meterEnv(env), ctx);
    },
  };
}
