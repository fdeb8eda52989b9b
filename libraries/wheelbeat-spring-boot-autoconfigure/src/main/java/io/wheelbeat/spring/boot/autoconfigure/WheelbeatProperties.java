package io.wheelbeat.spring.boot.autoconfigure;

import io.wheelbeat.netty.TcpKeepAlive;
import io.wheelbeat.netty.heartbeat.PingLimits;
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

    /** @return whether timeout closes are quiet */
    public boolean isQuietTimeoutClose() {
        return quietTimeoutClose;
    }

    /** @param quietTimeoutClose whether timeout closes are quiet */
    public void setQuietTimeoutClose(boolean quietTimeoutClose) {
        this.quietTimeoutClose = quietTimeoutClose;
    }

    /** @return the server's settings */
    public Server getServer() {
        return server;
    }

    /** @return WebClient's settings */
    public Client getClient() {
        return client;
    }

    /** @return the event loops' settings */
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

        /** @return the TCP keepalive settings */
        public TcpKeepAliveSettings getTcpKeepAlive() {
            return tcpKeepAlive;
        }

        /** @return the read timeout, or null for none */
        public Duration getReadTimeout() {
            return readTimeout;
        }

        /** @param readTimeout the read timeout, or null for none */
        public void setReadTimeout(Duration readTimeout) {
            this.readTimeout = readTimeout;
        }

        /** @return the write timeout, or null for none */
        public Duration getWriteTimeout() {
            return writeTimeout;
        }

        /** @param writeTimeout the write timeout, or null for none */
        public void setWriteTimeout(Duration writeTimeout) {
            this.writeTimeout = writeTimeout;
        }

        /** @return the maximum age, or null for none */
        public Duration getMaxConnectionAge() {
            return maxConnectionAge;
        }

        /** @param maxConnectionAge the maximum age, or null for none */
        public void setMaxConnectionAge(Duration maxConnectionAge) {
            this.maxConnectionAge = maxConnectionAge;
        }

        /** @return the maximum age's jitter, a fraction */
        public double getMaxConnectionAgeJitter() {
            return maxConnectionAgeJitter;
        }

        /** @param maxConnectionAgeJitter the maximum age's jitter, a fraction */
        public void setMaxConnectionAgeJitter(double maxConnectionAgeJitter) {
            this.maxConnectionAgeJitter = maxConnectionAgeJitter;
        }

        /** @return the grace after the maximum age */
        public Duration getMaxConnectionAgeGrace() {
            return maxConnectionAgeGrace;
        }

        /** @param maxConnectionAgeGrace the grace after the maximum age */
        public void setMaxConnectionAgeGrace(Duration maxConnectionAgeGrace) {
            this.maxConnectionAgeGrace = maxConnectionAgeGrace;
        }
    }

    /** What the connections of the Reactor Netty web server get. */
    public static class Server extends Connections {

        /** Closes a connection whose first request has not come within this long of the connect. Unset: none. */
        private Duration firstRequestTimeout;

        private final SlowConsumer slowConsumer = new SlowConsumer();

        private final ServerHttp2 http2 = new ServerHttp2();

        private final WebSocket websocket = new WebSocket();

        /** @return the HTTP/2 keepalive settings */
        public ServerHttp2 getHttp2() {
            return http2;
        }

        /** @return the WebSocket keepalive settings */
        public WebSocket getWebsocket() {
            return websocket;
        }

        /** @return the first-request timeout, or null for none */
        public Duration getFirstRequestTimeout() {
            return firstRequestTimeout;
        }

        /** @param firstRequestTimeout the first-request timeout, or null for none */
        public void setFirstRequestTimeout(Duration firstRequestTimeout) {
            this.firstRequestTimeout = firstRequestTimeout;
        }

        /** @return the slow-consumer guard's settings */
        public SlowConsumer getSlowConsumer() {
            return slowConsumer;
        }
    }

    /** What the connections of WebClient (Boot's WebClient.Builder, on Reactor Netty) get. */
    public static class Client extends Connections {

        private final Http2 http2 = new Http2();

        /** @return the HTTP/2 keepalive settings */
        public Http2 getHttp2() {
            return http2;
        }
    }

    /**
     * HTTP/2 keepalive PINGs (gRPC's rules): on an HTTP/2 connection (h2 or h2c) with nothing read
     * for the keepalive time, a PING goes out; when neither its ACK nor anything else comes within
     * the timeout, GOAWAY and the connection is closed.
     */
    public static class Http2 {

        /** The time without a read after which a PING goes out. Unset: no keepalive PINGs. */
        private Duration keepAliveTime;

        /** How long a PING may wait for its ACK (or anything else from the peer) before the connection is closed. */
        private Duration keepAliveTimeout = Duration.ofSeconds(20);

        /** Whether PINGs go out while no stream is open (an idle connection is not pinged otherwise). */
        private boolean keepAliveWithoutCalls;

        /** @return the keepalive time, or null for none */
        public Duration getKeepAliveTime() {
            return keepAliveTime;
        }

        /** @param keepAliveTime the keepalive time, or null for none */
        public void setKeepAliveTime(Duration keepAliveTime) {
            this.keepAliveTime = keepAliveTime;
        }

        /** @return the keepalive timeout */
        public Duration getKeepAliveTimeout() {
            return keepAliveTimeout;
        }

        /** @param keepAliveTimeout the keepalive timeout */
        public void setKeepAliveTimeout(Duration keepAliveTimeout) {
            this.keepAliveTimeout = keepAliveTimeout;
        }

        /** @return whether PINGs go out while no stream is open */
        public boolean isKeepAliveWithoutCalls() {
            return keepAliveWithoutCalls;
        }

        /** @param keepAliveWithoutCalls whether PINGs go out while no stream is open */
        public void setKeepAliveWithoutCalls(boolean keepAliveWithoutCalls) {
            this.keepAliveWithoutCalls = keepAliveWithoutCalls;
        }

        /** Whether a setting asks for the HTTP/2 keepalive handler. */
        boolean configured() {
            return keepAliveTime != null;
        }
    }

    /**
     * The server's HTTP/2 keepalive, and how often the client may PING (gRPC's
     * {@code permitKeepAliveTime} and {@code maxPingStrikes}): a PING sooner than the permitted
     * time after the last one in time is a strike, and the last strike ends the connection with
     * GOAWAY ENHANCE_YOUR_CALM.
     */
    public static class ServerHttp2 extends Http2 {

        /**
         * The shortest time between the client's PINGs that is not a strike. Set, it also holds a
         * connection with no open stream to one PING per two hours unless
         * permit-keep-alive-without-calls. Unset: a flood limit only (100 ms, 3 strikes).
         */
        private Duration permitKeepAliveTime;

        /** Whether the client may PING at the permitted time while no stream is open. */
        private boolean permitKeepAliveWithoutCalls;

        /** The strike that ends the connection. */
        private int maxPingStrikes = 3;

        /** @return the permitted PING interval, or null for the flood limit only */
        public Duration getPermitKeepAliveTime() {
            return permitKeepAliveTime;
        }

        /** @param permitKeepAliveTime the permitted PING interval, or null for the flood limit only */
        public void setPermitKeepAliveTime(Duration permitKeepAliveTime) {
            this.permitKeepAliveTime = permitKeepAliveTime;
        }

        /** @return whether the client may PING while no stream is open */
        public boolean isPermitKeepAliveWithoutCalls() {
            return permitKeepAliveWithoutCalls;
        }

        /** @param permitKeepAliveWithoutCalls whether the client may PING while no stream is open */
        public void setPermitKeepAliveWithoutCalls(boolean permitKeepAliveWithoutCalls) {
            this.permitKeepAliveWithoutCalls = permitKeepAliveWithoutCalls;
        }

        /** @return the number of strikes in a row */
        public int getMaxPingStrikes() {
            return maxPingStrikes;
        }

        /** @param maxPingStrikes the number of strikes in a row */
        public void setMaxPingStrikes(int maxPingStrikes) {
            this.maxPingStrikes = maxPingStrikes;
        }

        @Override
        boolean configured() {
            return super.configured() || permitKeepAliveTime != null;
        }
    }

    /**
     * WebSocket keepalive on the server's WebSocket connections (WebFlux's WebSocketHandler on
     * Reactor Netty): after the ping interval without a write, a ping frame carrying its id goes
     * out; after max-missed-pongs pings in a row without their pong in time, the connection is
     * closed. The client's pings are answered, at most max-ping-strikes per min-ping-interval:
     * the last strike ends the connection with a close frame 1008.
     */
    public static class WebSocket {

        /** The time without a write after which a ping goes out. Unset: no WebSocket keepalive. */
        private Duration pingInterval;

        /** How long a pong may take after its ping. Unset: the ping interval. */
        private Duration pongTimeout;

        /** How many pings in a row may go without their pong in time; the last of them closes the connection. */
        private int maxMissedPongs = 3;

        /** The shortest time between the client's pings that is not a strike. */
        private Duration minPingInterval = Duration.ofMillis(100);

        /** The strike that ends the connection; 0 answers the client's pings at any rate. */
        private int maxPingStrikes = 3;

        /** @return the ping interval, or null for no keepalive */
        public Duration getPingInterval() {
            return pingInterval;
        }

        /** @param pingInterval the ping interval, or null for no keepalive */
        public void setPingInterval(Duration pingInterval) {
            this.pingInterval = pingInterval;
        }

        /** @return the pong timeout, or null for the ping interval */
        public Duration getPongTimeout() {
            return pongTimeout;
        }

        /** @param pongTimeout the pong timeout, or null for the ping interval */
        public void setPongTimeout(Duration pongTimeout) {
            this.pongTimeout = pongTimeout;
        }

        /** @return the pings in a row without their pong that close the connection */
        public int getMaxMissedPongs() {
            return maxMissedPongs;
        }

        /** @param maxMissedPongs the pings in a row without their pong that close the connection */
        public void setMaxMissedPongs(int maxMissedPongs) {
            this.maxMissedPongs = maxMissedPongs;
        }

        /** @return the shortest time between the client's pings that is not a strike */
        public Duration getMinPingInterval() {
            return minPingInterval;
        }

        /** @param minPingInterval the shortest time between the client's pings that is not a strike */
        public void setMinPingInterval(Duration minPingInterval) {
            this.minPingInterval = minPingInterval;
        }

        /** @return the number of strikes in a row, 0 for no limit */
        public int getMaxPingStrikes() {
            return maxPingStrikes;
        }

        /** @param maxPingStrikes the number of strikes in a row, 0 for no limit */
        public void setMaxPingStrikes(int maxPingStrikes) {
            this.maxPingStrikes = maxPingStrikes;
        }

        /** The client's ping limits as {@link PingLimits}. */
        PingLimits pingLimits() {
            return maxPingStrikes == 0 ? PingLimits.OFF : PingLimits.of(minPingInterval, maxPingStrikes);
        }
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

        /** @return whether enabled */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether enabled */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return the most bytes pending */
        public DataSize getMaxPending() {
            return maxPending;
        }

        /** @param maxPending the most bytes pending */
        public void setMaxPending(DataSize maxPending) {
            this.maxPending = maxPending;
        }

        /** @return the unwritable timeout */
        public Duration getUnwritableTimeout() {
            return unwritableTimeout;
        }

        /** @param unwritableTimeout the unwritable timeout */
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

        /**
         * TCP_USER_TIMEOUT: how long sent data may stay unacknowledged (epoll and io_uring; NIO
         * cannot). Unset: the kernel's.
         */
        private Duration userTimeout;

        /** @return whether enabled */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether enabled */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return the silence before the first probe */
        public Duration getIdle() {
            return idle;
        }

        /** @param idle the silence before the first probe */
        public void setIdle(Duration idle) {
            this.idle = idle;
        }

        /** @return the time between probes */
        public Duration getInterval() {
            return interval;
        }

        /** @param interval the time between probes */
        public void setInterval(Duration interval) {
            this.interval = interval;
        }

        /** @return the unanswered probes that drop the connection */
        public int getCount() {
            return count;
        }

        /** @param count the unanswered probes that drop the connection */
        public void setCount(int count) {
            this.count = count;
        }

        /** @return TCP_USER_TIMEOUT, or null for the kernel's */
        public Duration getUserTimeout() {
            return userTimeout;
        }

        /** @param userTimeout TCP_USER_TIMEOUT, or null for the kernel's */
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

        /**
         * The number of event loops; 0 takes Reactor Netty's (reactor.netty.ioWorkerCount, or the
         * CPU count, at least 4).
         */
        private int threads;

        /** @return whether enabled */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether enabled */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return the number of loops, 0 for Reactor Netty's */
        public int getThreads() {
            return threads;
        }

        /** @param threads the number of loops, 0 for Reactor Netty's */
        public void setThreads(int threads) {
            this.threads = threads;
        }
    }
}
