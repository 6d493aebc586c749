/**
 * docs/sdk.md run as written, on the README's flag-service tour (its own
 * service, pushes and tokens; tests/docs/tour.ts says what it adapts): the
 * FlagClient in Deno, the same client bundled for Node, the OpenFeature
 * provider, and `cfgtool watch` with its mirror.
 */
import { testDocOnServiceTour } from "./tour.ts";

testDocOnServiceTour("docs/sdk.md");
