/**
 * wheelbeat's core: the timing wheel and its drivers, backoff policies, per-key rate limiters.
 * No Netty; Micrometer only for the meter binders ({@code requires static}: bring it to bind them).
 * {@code io.wheelbeat.core.internal.checks} (the settings checks) is exported only to wheelbeat's
 * other modules.
 */
module io.wheelbeat.core {
    requires org.slf4j;
    requires static micrometer.core;

    exports io.wheelbeat.core;
    exports io.wheelbeat.core.backoff;
    exports io.wheelbeat.core.ratelimit;
    // The settings checks: shared with wheelbeat's own modules, hidden from users.
    exports io.wheelbeat.core.internal.checks to io.wheelbeat.netty, io.wheelbeat.ratelimit.redis;
}
