/**
 * Every service call runs in a trace span `cfgtool.service.<operation>`
 * with the tenant and namespace it acts on (lib/telemetry/spans.ts), and
 * a refused call marks its span failed with the error's code. A tracer
 * provider that records spans stands in for Deno's exporter.
 */
import { assertEquals, assertRejects } from "../assert.ts";
import { type Attributes, type Span, type SpanOptions, trace } from "@opentelemetry/api";
import { ForbiddenError } from "../../lib/errors.ts";
import { pushManifest, rollbackManifest } from "../../lib/services/manifests.ts";
import { addNamespaceAdmin, createNamespace } from "../../lib/services/namespaces.ts";
import { createTenant, deleteTenant } from "../../lib/services/tenants.ts";
import { createUser } from "../../lib/store/users.ts";
import { serviceTest } from "./world.ts";

interface Recorded {
  name: string;
  attributes: Attributes;
  status?: { code: number; message?: string };
}

const recorded: Recorded[] = [];
/** The service spans recorded (KV spans and others are left out). */
const serviceSpans = () => recorded.filter((s) => s.name.startsWith("cfgtool.service."));

function recordingSpan(rec: Recorded): Span {
  const span = {
    spanContext: () => ({ traceId: "1".repeat(32), spanId: "2".repeat(16), traceFlags: 1 }),
    isRecording: () => true,
    setAttribute(k: string, v: Attributes[string]) {
      rec.attributes[k] = v;
      return span;
    },
    setAttributes(a: Attributes) {
      Object.assign(rec.attributes, a);
      return span;
    },
    addEvent: () => span,
    addLink: () => span,
    addLinks: () => span,
    updateName: () => span,
    setStatus(status: { code: number; message?: string }) {
      rec.status = status;
      return span;
    },
    end: () => {},
    recordException: () => {},
  };
  return span as unknown as Span;
}

const tracer = {
  startSpan(name: string, options: SpanOptions = {}): Span {
    const rec = { name, attributes: { ...options.attributes } };
    recorded.push(rec);
    return recordingSpan(rec);
  },
  startActiveSpan(name: string, options: SpanOptions, fn: (span: Span) => unknown) {
    return fn(tracer.startSpan(name, options));
  },
};

// Registered once; lib/telemetry/spans.ts's tracer (made when it loaded) delegates to it.
if (!trace.setGlobalTracerProvider({ getTracer: () => tracer as never })) {
  throw new Error("a tracer provider was registered before this test's");
}

const ctx = { requestId: "req-span" };
const web = { tenant: "acme", namespace: "web" };
const files = { "namespace.toml": "schema_version = 1\n[namespace.environments.prod]\n" };
const upload = {
  format: "json" as const,
  bytes: new TextEncoder().encode(JSON.stringify({ files })),
};

serviceTest(
  "each service call is a span named for its operation, with its tenant and namespace",
  async (w) => {
    recorded.length = 0;
    await createTenant(w.services, w.superadmin, { slug: "beta" }, ctx);
    await createNamespace(w.services, w.superadmin, "beta", { slug: "app" }, ctx);
    await pushManifest(w.services, w.superadmin, web, { upload }, ctx);
    await rollbackManifest(w.services, w.superadmin, web, { version: 0 }, ctx);
    const ana = await createUser(w.kv, { email: "ana@example.com" });
    await addNamespaceAdmin(w.services, w.superadmin, "acme", "web", ana.id, ctx);
    await deleteTenant(w.services, w.superadmin, "beta", ctx);
    const seen = serviceSpans().map((s) => [s.name, s.attributes]);
    assertEquals(seen, [
      ["cfgtool.service.create_tenant", { "cfgtool.tenant": "beta" }],
      ["cfgtool.service.create_namespace", {
        "cfgtool.tenant": "beta",
        "cfgtool.namespace": "app",
      }],
      ["cfgtool.service.push_manifest", { "cfgtool.tenant": "acme", "cfgtool.namespace": "web" }],
      ["cfgtool.service.manifest_target", { "cfgtool.tenant": "acme", "cfgtool.namespace": "web" }],
      ["cfgtool.service.rollback_manifest", {
        "cfgtool.tenant": "acme",
        "cfgtool.namespace": "web",
      }],
      ["cfgtool.service.manifest_target", { "cfgtool.tenant": "acme", "cfgtool.namespace": "web" }],
      ["cfgtool.service.add_namespace_admin", {
        "cfgtool.tenant": "acme",
        "cfgtool.namespace": "web",
      }],
      ["cfgtool.service.delete_tenant", { "cfgtool.tenant": "beta" }],
    ]);
    assertEquals(serviceSpans().every((s) => s.status === undefined), true);
  },
);

serviceTest("a refused call's span is marked failed with the error's code", async (w) => {
  const reader = await w.asWeb("namespace-read");
  recorded.length = 0;
  await assertRejects(
    () => pushManifest(w.services, reader, web, { upload }, ctx),
    ForbiddenError,
  );
  assertEquals(serviceSpans().map((s) => [s.name, s.status?.message]), [
    ["cfgtool.service.push_manifest", "forbidden"],
    ["cfgtool.service.manifest_target", "forbidden"],
  ]);
  assertEquals(serviceSpans().every((s) => s.status?.code === 2), true, "SpanStatusCode.ERROR");
});
