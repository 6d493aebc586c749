/**
 * The audit page's filters (lib/console/audit_filters.ts): what the
 * GET form may hold, read as UTC, and what it refuses.
 */
import { assertEquals } from "../assert.ts";
import {
  AUDIT_MAX_PAGE_SIZE,
  AUDIT_PAGE_SIZE,
  auditFilterInput,
  auditLinkQuery,
  parseAuditFilter,
  utcFieldTime,
} from "../../lib/console/audit_filters.ts";

Deno.test("an empty form is the newest page of the default size", () => {
  const { filter, problems } = parseAuditFilter(auditFilterInput({}));
  assertEquals(filter, { limit: AUDIT_PAGE_SIZE });
  assertEquals(problems, []);
});

Deno.test("datetime-local values are UTC, and an end takes in the whole minute or second", () => {
  assertEquals(utcFieldTime("2026-11-24T06:05"), {
    start: Date.UTC(2026, 10, 24, 6, 5),
    end: Date.UTC(2026, 10, 24, 6, 6),
  });
  assertEquals(utcFieldTime("2026-11-24T06:05:07.5")?.start, Date.UTC(2026, 10, 24, 6, 5, 7, 500));
  assertEquals(utcFieldTime("2026-11-24T24:00"), null);
  assertEquals(utcFieldTime("2026-11-24 06:05"), null);
  const { filter } = parseAuditFilter(
    auditFilterInput({ from: "2026-11-24T06:00", to: "2026-11-24T06:05" }),
  );
  assertEquals(filter.from, Date.UTC(2026, 10, 24, 6, 0));
  assertEquals(filter.to, Date.UTC(2026, 10, 24, 6, 6));
});

Deno.test("each refused field is named and left out; the rest still filters", () => {
  const { filter, problems } = parseAuditFilter(auditFilterInput({
    type: "token.created",
    namespace: "Not A Slug",
    after: "nope",
    limit: String(AUDIT_MAX_PAGE_SIZE + 1),
    from: "2026-11-24T07:00",
    to: "2026-11-24T06:00",
  }));
  assertEquals(problems.map((p) => p.field), ["namespace", "after", "to", "limit"]);
  assertEquals(filter, {
    type: "token.created",
    from: Date.UTC(2026, 10, 24, 7, 0),
    limit: AUDIT_PAGE_SIZE,
  });
});

Deno.test("an actor is kept as typed: an id's case matters, an email is resolved later", () => {
  const id = "usr_01ARZ3NDEKTSV4RRFFQ69G5FAV";
  assertEquals(parseAuditFilter(auditFilterInput({ actor: ` ${id} ` })).filter.actor, id);
});

Deno.test("a page link keeps the filters as typed and sets the cursor", () => {
  const input = auditFilterInput({ type: "login.failed", from: "2026-11-24T06:00", after: "X" });
  assertEquals(auditLinkQuery(input, "01ARZ3NDEKTSV4RRFFQ69G5FAV"), {
    type: "login.failed",
    actor: "",
    namespace: "",
    from: "2026-11-24T06:00",
    to: "",
    after: "01ARZ3NDEKTSV4RRFFQ69G5FAV",
    limit: "",
  });
  assertEquals(auditLinkQuery(input, undefined).after, undefined);
});
