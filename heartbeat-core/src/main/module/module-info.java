/**
 * wheelbeat's core: the timing wheel and its drivers, backoff policies, per-key rate limiters.
 * No Netty; Micrometer only for the meter binders ({@code requires static}: bring it to bind them).
 */
module io.wheelbeat.core {
    requires org.slf4j;
    requires static micrometer.core;

    exports io.wheelbeat.core;
    exports io.wheelbeat.core.backoff;
    exports io.wheelbeat.core.ratelimit;
}
