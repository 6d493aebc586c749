/**
 * docs/ofrep.md run as written, on the README's flag-service tour (its own
 * service, pushes and tokens; tests/docs/tour.ts says what it adapts): the
 * client token of the public environment and the warning for the other, the
 * cfgtool and OFREP endpoints, ETag and 304, the event stream, and the
 * OpenFeature server and web providers of the registry, each in a directory
 * of its own, the web provider following a push.
 */
import { testDocOnServiceTour } from "./tour.ts";

testDocOnServiceTour("docs/ofrep.md");
