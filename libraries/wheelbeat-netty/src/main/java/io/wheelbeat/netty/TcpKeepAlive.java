package io.wheelbeat.netty;

import io.netty.channel.Channel;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelOption;
import io.wheelbeat.core.internal.checks.ConfigChecks;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * TCP keepalive in one call for a connection on any of Netty's socket transports: turns
 * {@code SO_KEEPALIVE} on and sets the kernel's keepalive idle time, probe interval and probe
 * count, and, where the transport can, {@code TCP_USER_TIMEOUT} (how long sent data may stay
 * unacknowledged before the kernel drops the connection).
 * <pre>{@code
 * TcpKeepAlive.DEFAULT.applyTo(channel); // in a ChannelInitializer, or Reactor Netty's doOnChannelInit
 * }</pre>
 * The options are found by name among those the channel's config supports, so one call serves NIO
 * (the JDK's extended socket options, Linux and macOS; no user timeout), epoll and io_uring, on
 * Netty 4.1 and 4.2, without a compile-time dependency on a native transport. Durations are set in
 * whole seconds (user timeout: milliseconds), rounded up.
 *
 * <p>Immutable and thread-safe; {@link #applyTo} runs wherever the channel's config may be set.
 */
public final class TcpKeepAlive {

    private static final Logger log = LoggerFactory.getLogger(TcpKeepAlive.class);

    /** Lettuce's keepalive: the first probe after 13 s of silence, then every 13 s, 3 probes; no user timeout. */
    public static final TcpKeepAlive DEFAULT = new TcpKeepAlive(13, 13, 3, 0);

    private final int idleSeconds;
    private final int intervalSeconds;
    private final int count;
    /** 0: not set. */
    private final int userTimeoutMillis;

    private TcpKeepAlive(int idleSeconds, int intervalSeconds, int count, int userTimeoutMillis) {
        this.idleSeconds = idleSeconds;
        this.intervalSeconds = intervalSeconds;
        this.count = count;
        this.userTimeoutMillis = userTimeoutMillis;
    }

    /**
     * Keepalive with these settings and no user timeout.
     *
     * @param idle the silence before the first probe; whole seconds, rounded up
     * @param interval the time between probes; whole seconds, rounded up
     * @param count the unanswered probes after which the kernel drops the connection
     * @return the settings
     * @throws NullPointerException if a duration is null
     * @throws IllegalArgumentException if a duration or the count is not positive, or a duration
     *     is over {@link Integer#MAX_VALUE} seconds
     */
    public static TcpKeepAlive of(Duration idle, Duration interval, int count) {
        return new TcpKeepAlive(
                seconds("idle", idle), seconds("interval", interval), ConfigChecks.positive("count", count), 0);
    }

    /**
     * The same keepalive with {@code TCP_USER_TIMEOUT} set (epoll and io_uring; NIO cannot).
     *
     * @param timeout how long sent data may stay unacknowledged; whole milliseconds, rounded up
     * @return new settings
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is not positive or over
     *     {@link Integer#MAX_VALUE} milliseconds
     */
    public TcpKeepAlive withUserTimeout(Duration timeout) {
        long nanos = ConfigChecks.positiveNanos("userTimeout", timeout);
        return new TcpKeepAlive(
                idleSeconds, intervalSeconds, count, checkedInt("userTimeout", ceilDiv(nanos, 1_000_000L)));
    }

    /**
     * Sets the keepalive options on {@code channel}'s socket. A transport without TCP sockets
     * (local, embedded) is left alone; an option its socket does not support is skipped, and
     * said once at DEBUG per connection.
     *
     * @param channel a channel, registered or not
     * @return whether idle, interval and count were all set
     * @throws NullPointerException if {@code channel} is null
     */
    public boolean applyTo(Channel channel) {
        ChannelConfig config = channel.config();
        Options options = Options.OF.computeIfAbsent(config.getClass(), type -> Options.find(config));
        if (options.keepAlive == null) {
            return false;
        }
        config.setOption(options.keepAlive, Boolean.TRUE);
        boolean set = set(config, options.idle, idleSeconds)
                & set(config, options.interval, intervalSeconds)
                & set(config, options.count, count);
        if (userTimeoutMillis > 0 && !set(config, options.userTimeout, userTimeoutMillis)) {
            log.debug("{}: TCP_USER_TIMEOUT is not available on this transport", channel);
        }
        if (!set) {
            log.debug("{}: the kernel's keepalive times are not available on this transport", channel);
        }
        return set;
    }

    private static boolean set(ChannelConfig config, ChannelOption<Integer> option, int value) {
        return option != null && config.setOption(option, value);
    }

    private static int seconds(String name, Duration duration) {
        return checkedInt(name, ceilDiv(ConfigChecks.positiveNanos(name, duration), 1_000_000_000L));
    }

    private static long ceilDiv(long value, long divisor) {
        return (value + divisor - 1) / divisor;
    }

    private static int checkedInt(String name, long value) {
        if (value > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(name + " is too long: " + value);
        }
        return (int) value;
    }

    @Override
    public String toString() {
        return "TcpKeepAlive(idle " + idleSeconds + " s, interval " + intervalSeconds + " s, count " + count
                + (userTimeoutMillis > 0 ? ", user timeout " + userTimeoutMillis + " ms" : "") + ")";
    }

    /** The keepalive options a kind of channel config supports; null where it has none. */
    private record Options(
            ChannelOption<Boolean> keepAlive,
            ChannelOption<Integer> idle,
            ChannelOption<Integer> interval,
            ChannelOption<Integer> count,
            ChannelOption<Integer> userTimeout) {

        /** By config class: the options a socket supports depend on its transport, JDK and OS, not on the socket. */
        static final Map<Class<?>, Options> OF = new ConcurrentHashMap<>();

        /**
         * The options {@code config} lists, matched by name: the JDK's (NIO) or a native transport's
         * ({@code Class#NAME}).
         */
        static Options find(ChannelConfig config) {
            Set<ChannelOption<?>> supported = config.getOptions().keySet();
            ChannelOption<Integer> idle = named(supported, "TCP_KEEPIDLE", "TCP_KEEPIDLE");
            ChannelOption<Integer> userTimeout = named(supported, "TCP_USER_TIMEOUT", "TCP_USER_TIMEOUT");
            if (userTimeout == null && idle != null && idle.name().endsWith("#TCP_KEEPIDLE")) {
                // epoll's config sets TCP_USER_TIMEOUT without listing it: its constant beside TCP_KEEPIDLE
                String name =
                        idle.name().substring(0, idle.name().length() - "TCP_KEEPIDLE".length()) + "TCP_USER_TIMEOUT";
                userTimeout = ChannelOption.exists(name) ? ChannelOption.valueOf(name) : null;
            }
            return new Options(
                    supported.contains(ChannelOption.SO_KEEPALIVE) ? ChannelOption.SO_KEEPALIVE : null,
                    idle,
                    named(supported, "TCP_KEEPINTERVAL", "TCP_KEEPINTVL"),
                    named(supported, "TCP_KEEPCOUNT", "TCP_KEEPCNT"),
                    userTimeout);
        }

        @SuppressWarnings("unchecked") // every option of these names takes an Integer, in the JDK and in Netty
        private static ChannelOption<Integer> named(
                Set<ChannelOption<?>> supported, String jdkName, String nativeName) {
            for (ChannelOption<?> option : supported) {
                String name = option.name();
                if (name.equals(jdkName) || name.endsWith("#" + nativeName)) {
                    return (ChannelOption<Integer>) option;
                }
            }
            return null;
        }
    }
}
