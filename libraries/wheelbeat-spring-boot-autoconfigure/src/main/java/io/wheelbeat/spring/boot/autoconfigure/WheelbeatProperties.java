package io.wheelbeat.spring.boot.autoconfigure;

import io.wheelbeat.netty.TcpKeepAlive;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * The {@code wheelbeat.*} properties: what the Reactor Netty server (WebFlux) and the
 * {@code WebClient} connections get from wheelbeat. Every handler is off until its property is
 * set; every close a handler makes is counted in {@code wheelbeat.connection.closed} (tag
 * {@code reason}) when Micrometer has a registry.
 */
@ConfigurationProperties("wheelbeat")
public class WheelbeatProperties {

    /**
     * Whether a connection closed by a read or write timeout is closed quietly (logged once at
     * DEBUG by io.wheelbeat.netty.idle.TimeoutCloses, and counted) rather than by firing Netty's
     * timeout exception, which Reactor Netty logs at ERROR with a stack trace.
     */
    private boolean quietTimeoutClose = true;

    private final Server server = new Server();

    private final Client client = new Client();

    private final Loop loop = new Loop();

    public boolean isQuietTimeoutClose() {
        return quietTimeoutClose;
    }

    public void setQuietTimeoutClose(boolean quietTimeoutClose) {
        this.quietTimeoutClose = quietTimeoutClose;
    }

    public Server getServer() {
        return server;
    }

    public Client getClient() {
        return client;
    }

    public Loop getLoop() {
        return loop;
    }

    /** The settings the server's and WebClient's connections share. */
    public static class Connections {

        /**
         * Closes a connection from which nothing was read for this long: on the server before its
         * first request, between requests, and while its client waits for a response; on the client
         * while pooled and idle or waiting for a response. Choose it above the slowest exchange.
         * Unset: no read timeout.
         */
        private Duration readTimeout;

        /** Closes a connection when a write has not completed within this long. Unset: none. */
        private Duration writeTimeout;

        /**
         * Closes a connection once it reaches this age (moved per connection by the jitter),
         * after the grace. Unset: connections live as long as they are used.
         */
        private Duration maxConnectionAge;

        /** The random fraction (0 to 1) by which each connection's maximum age is moved, up or down. */
        private double maxConnectionAgeJitter = 0.1;

        /** How long a connection that reached its maximum age may finish its exchange before it is closed. */
        private Duration maxConnectionAgeGrace = Duration.ZERO;

        private final TcpKeepAliveSettings tcpKeepAlive = new TcpKeepAliveSettings();

        public TcpKeepAliveSettings getTcpKeepAlive() {
            return tcpKeepAlive;
        }

        public Duration getReadTimeout() {
            return readTimeout;
        }

        public void setReadTimeout(Duration readTimeout) {
            this.readTimeout = readTimeout;
        }

        public Duration getWriteTimeout() {
            return writeTimeout;
        }

        public void setWriteTimeout(Duration writeTimeout) {
            this.writeTimeout = writeTimeout;
        }

        public Duration getMaxConnectionAge() {
            return maxConnectionAge;
        }

        public void setMaxConnectionAge(Duration maxConnectionAge) {
            this.maxConnectionAge = maxConnectionAge;
        }

        public double getMaxConnectionAgeJitter() {
            return maxConnectionAgeJitter;
        }

        public void setMaxConnectionAgeJitter(double maxConnectionAgeJitter) {
            this.maxConnectionAgeJitter = maxConnectionAgeJitter;
        }

        public Duration getMaxConnectionAgeGrace() {
            return maxConnectionAgeGrace;
        }

        public void setMaxConnectionAgeGrace(Duration maxConnectionAgeGrace) {
            this.maxConnectionAgeGrace = maxConnectionAgeGrace;
        }
    }

    /** What the connections of the Reactor Netty web server get. */
    public static class Server extends Connections {

        /** Closes a connection whose first request has not come within this long of the connect. Unset: none. */
        private Duration firstRequestTimeout;

        private final SlowConsumer slowConsumer = new SlowConsumer();

        public Duration getFirstRequestTimeout() {
            return firstRequestTimeout;
        }

        public void setFirstRequestTimeout(Duration firstRequestTimeout) {
            this.firstRequestTimeout = firstRequestTimeout;
        }

        public SlowConsumer getSlowConsumer() {
            return slowConsumer;
        }
    }

    /** What the connections of WebClient (Boot's WebClient.Builder, on Reactor Netty) get. */
    public static class Client extends Connections {
    }

    /**
     * The slow-consumer guard: stops reading from a connection while its client does not drain
     * the responses, and ends a connection that lets too much pile up or stays unwritable too long.
     */
    public static class SlowConsumer {

        /** Whether the server's connections get the slow-consumer guard. */
        private boolean enabled;

        /** Ends a connection when more than this is waiting in its outbound buffer. */
        private DataSize maxPending = DataSize.ofMegabytes(4);

        /** Ends a connection that stays unwritable for this long. */
        private Duration unwritableTimeout = Duration.ofSeconds(30);

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public DataSize getMaxPending() {
            return maxPending;
        }

        public void setMaxPending(DataSize maxPending) {
            this.maxPending = maxPending;
        }

        public Duration getUnwritableTimeout() {
            return unwritableTimeout;
        }

        public void setUnwritableTimeout(Duration unwritableTimeout) {
            this.unwritableTimeout = unwritableTimeout;
        }
    }

    /**
     * TCP keepalive on each connection's socket (NIO, epoll, io_uring): the kernel probes a
     * silent peer and drops the connection when the probes go unanswered.
     */
    public static class TcpKeepAliveSettings {

        /** Whether the connections' sockets get TCP keepalive with these settings. */
        private boolean enabled;

        /** The silence before the first probe (whole seconds). */
        private Duration idle = Duration.ofSeconds(13);

        /** The time between probes (whole seconds). */
        private Duration interval = Duration.ofSeconds(13);

        /** The unanswered probes after which the kernel drops the connection. */
        private int count = 3;

        /** TCP_USER_TIMEOUT: how long sent data may stay unacknowledged (epoll and io_uring; NIO cannot). Unset: the kernel's. */
        private Duration userTimeout;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getIdle() {
            return idle;
        }

        public void setIdle(Duration idle) {
            this.idle = idle;
        }

        public Duration getInterval() {
            return interval;
        }

        public void setInterval(Duration interval) {
            this.interval = interval;
        }

        public int getCount() {
            return count;
        }

        public void setCount(int count) {
            this.count = count;
        }

        public Duration getUserTimeout() {
            return userTimeout;
        }

        public void setUserTimeout(Duration userTimeout) {
            this.userTimeout = userTimeout;
        }

        /** The settings as a {@link TcpKeepAlive}, or null when not enabled. */
        TcpKeepAlive toTcpKeepAlive() {
            if (!enabled) {
                return null;
            }
            TcpKeepAlive keepAlive = TcpKeepAlive.of(idle, interval, count);
            return userTimeout == null ? keepAlive : keepAlive.withUserTimeout(userTimeout);
        }
    }

    /** Reactor Netty's event loops. */
    public static class Loop {

        /**
         * Whether the server's and WebClient's event loops are a WheelIoEventLoopGroup on the
         * transport Reactor Netty would pick (epoll, io_uring, kqueue or NIO), so that every timer
         * Reactor Netty and Netty schedule on them (server.netty.idle-timeout included) is on the
         * loop's timing wheel. Needs Netty 4.2: on Netty 4.1 a warning says so and the loops stay
         * Reactor Netty's.
         */
        private boolean enabled;

        /** The number of event loops; 0 takes Reactor Netty's (reactor.netty.ioWorkerCount, or the CPU count, at least 4). */
        private int threads;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public int getThreads() {
            return threads;
        }

        public void setThreads(int threads) {
            this.threads = threads;
        }
    }
}
