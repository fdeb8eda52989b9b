/**
 * wheelbeat's core: the timing wheel and its drivers, backoff policies, per-key rate limiters.
 * No Netty; Micrometer only for the meter binders ({@code requires static}: bring it to bind them).
 * {@code io.wheelbeat.core.internal} (the drivers' shared machinery, settings, virtual time,
 * meters) and {@code io.wheelbeat.core.internal.checks} are exported only to wheelbeat's other modules.
 */
module io.wheelbeat.core {
    requires org.slf4j;
    requires static micrometer.core;

    exports io.wheelbeat.core;
    exports io.wheelbeat.core.backoff;
    exports io.wheelbeat.core.ratelimit;
    exports io.wheelbeat.core.internal to io.wheelbeat.netty, io.wheelbeat.ratelimit.redis;
    exports io.wheelbeat.core.internal.checks to io.wheelbeat.netty, io.wheelbeat.ratelimit.redis;
}
