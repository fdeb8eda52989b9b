package io.wheelbeat.demo.server;

import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.netty4.NettyAllocatorMetrics;
import io.micrometer.core.instrument.binder.netty4.NettyEventExecutorMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.AdaptiveByteBufAllocator;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.core.ratelimit.KeyedRateLimiterMetrics;
import io.wheelbeat.core.ratelimit.RateLimit;
import io.wheelbeat.demo.MetricsEndpoint;
import io.wheelbeat.demo.Transport;
import io.wheelbeat.demo.protocol.Frame;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.EventLoopWheelsMetrics;
import io.wheelbeat.netty.guard.ClosePacer;
import io.wheelbeat.netty.websocket.WebSocketKeepAliveHandler;
import io.wheelbeat.ratelimit.redis.RedisLeaseStore;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The demo echo server: every wheelbeat feature in one pipeline, a Prometheus endpoint, and a
 * graceful shutdown on SIGTERM (stop accepting, GOODBYEs spread over the lame-duck window, each
 * telling its client to spread its reconnect over that window, then exit 0).
 */
@Command(
        name = "demo-server",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = "Echo server on wheelbeat: idle detection, heartbeats, deadlines and rate limits.")
public final class DemoServer implements Runnable {

    /** The path of the WebSocket endpoint: {@code ws://BIND:WEBSOCKET_PORT/ws}. */
    public static final String WEBSOCKET_PATH = "/ws";

    @Spec
    CommandSpec spec;

    private static final Logger log = LoggerFactory.getLogger(DemoServer.class);

    @Option(names = "--bind", description = "Address to listen on (default: ${DEFAULT-VALUE}).")
    String bind = "127.0.0.1";

    @Option(names = "--port", description = "Port to listen on; 0 picks one (default: ${DEFAULT-VALUE}).")
    int port = 7000;

    @Option(
            names = "--websocket-port",
            description = "Port of the WebSocket endpoint ws://BIND:PORT/ws (echo, "
                    + "same limits and metrics; the server pings); 0 picks one, -1 turns it off (default:"
                    + " ${DEFAULT-VALUE}).")
    int webSocketPort = -1;

    @Option(
            names = "--websocket-ping-interval-ms",
            description =
                    "WebSocket: ping after this long without writing, " + "+/-10%% jitter (default: ${DEFAULT-VALUE}).")
    long webSocketPingIntervalMillis = 5_000;

    @Option(
            names = "--websocket-pong-timeout-ms",
            description = "WebSocket: a pong must come this soon after its ping " + "(default: ${DEFAULT-VALUE}).")
    long webSocketPongTimeoutMillis = 3_000;

    @Option(
            names = "--websocket-max-missed-pongs",
            description = "WebSocket: missed pongs in a row that close a " + "connection (default: ${DEFAULT-VALUE}).")
    int webSocketMaxMissedPongs = 3;

    @Option(
            names = "--metrics-port",
            description = "Port of the Prometheus endpoint /metrics on the bind address; "
                    + "-1 turns it off (default: ${DEFAULT-VALUE}).")
    int metricsPort = 9100;

    @Option(names = "--threads", description = "Event loop threads; 0 for Netty's default (default: ${DEFAULT-VALUE}).")
    int threads = 0;

    @Option(
            names = "--reader-idle-ms",
            description = "Close a connection that sends nothing for this long " + "(default: ${DEFAULT-VALUE}).")
    long readerIdleMillis = 30_000;

    @Option(
            names = "--first-message-timeout-ms",
            description = "Close a connection whose first frame takes longer " + "(default: ${DEFAULT-VALUE}).")
    long firstMessageMillis = 10_000;

    @Option(
            names = "--max-age-ms",
            description =
                    "Maximum connection age, +/-10%% jitter; GOODBYE at the limit " + "(default: ${DEFAULT-VALUE}).")
    long maxAgeMillis = 600_000;

    @Option(
            names = "--max-age-grace-ms",
            description = "Time after the GOODBYE before a forced close " + "(default: ${DEFAULT-VALUE}).")
    long maxAgeGraceMillis = 5_000;

    @Option(
            names = "--min-ping-interval-ms",
            description = "Pings sooner than this after the last one are strikes " + "(default: ${DEFAULT-VALUE}).")
    long minPingIntervalMillis = 500;

    @Option(
            names = "--max-ping-strikes",
            description = "Strikes in a row that close a connection " + "(default: ${DEFAULT-VALUE}).")
    int maxPingStrikes = 3;

    @Option(names = "--max-frame-bytes", description = "Largest frame payload accepted (default: ${DEFAULT-VALUE}).")
    int maxFrameBytes = 64 * 1024;

    @Option(
            names = "--connections-per-address",
            description = "New connections allowed per source address " + "per second (default: ${DEFAULT-VALUE}).")
    long connectionsPerAddressPerSecond = 500;

    @Option(
            names = "--messages-per-connection",
            description =
                    "DATA frames allowed per connection per second; " + "more are dropped (default: ${DEFAULT-VALUE}).")
    long messagesPerConnectionPerSecond = 1_000;

    @Option(
            names = "--max-pending-bytes",
            description = "Close a connection with more than this many outbound "
                    + "bytes pending (a slow consumer) (default: ${DEFAULT-VALUE}).")
    long maxPendingBytes = 4L << 20;

    @Option(
            names = "--slow-consumer-timeout-ms",
            description = "Close a connection that stays unwritable " + "this long (default: ${DEFAULT-VALUE}).")
    long slowConsumerMillis = 10_000;

    @Option(
            names = "--close-rate-per-100ms",
            description = "Idle connections closed at most this many per "
                    + "100 ms; more wait their turn (default: ${DEFAULT-VALUE}).")
    int closesPer100Millis = 100;

    @Option(
            names = "--lame-duck-ms",
            description = "On SIGTERM, GOODBYEs (and closes) spread over this window, "
                    + "which each GOODBYE tells its client to spread its reconnect over (default: ${DEFAULT-VALUE}).")
    long lameDuckMillis = 5_000;

    @Option(
            names = "--redis",
            paramLabel = "URI",
            description = "Share the per-address connection limit with every "
                    + "server using this Redis (redis://host:port); off by default.")
    String redis;

    @Option(
            names = "--cluster-size",
            description = "With --redis: how many servers share the limit; each falls back "
                    + "to its share of it while Redis is down (default: ${DEFAULT-VALUE}).")
    int clusterSize = 1;

    /** Starts the server from the command line and runs until SIGTERM or SIGINT. */
    public static void main(String[] args) {
        System.exit(new CommandLine(new DemoServer()).execute(args));
    }

    @Override
    public void run() {
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch stopped = new CountDownLatch(1);
        onShutdown(stop, stopped);
        try (Running server = start()) {
            log.info(
                    "listening on {} ({}); WebSocket {}; metrics at {}",
                    server.address(),
                    server.transport,
                    server.webSocketAddress() == null
                            ? "off"
                            : "at ws://" + bind + ":"
                                    + server.webSocketAddress().getPort() + WEBSOCKET_PATH,
                    server.metrics == null
                            ? "off"
                            : "http://" + bind + ":" + server.metrics.address().getPort() + "/metrics");
            stop.await();
            log.info("shutting down");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            stopped.countDown();
        }
    }

    /**
     * On SIGTERM or SIGINT the JVM runs shutdown hooks: this one releases {@code stop} and holds the
     * JVM until {@code stopped}, so the graceful close finishes (the JVM then exits 143 or 130).
     */
    public static void onShutdown(CountDownLatch stop, CountDownLatch stopped) {
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            stop.countDown();
                            try {
                                stopped.await();
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        },
                        "demo-shutdown"));
    }

    /** Binds the server and returns it running; closing it shuts down gracefully. */
    public Running start() {
        validate();
        return new Running(this);
    }

    private void validate() {
        if (port < 0 || port > 65535) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--port must be 0..65535: " + port);
        }
        if (webSocketPort < -1 || webSocketPort > 65535) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--websocket-port must be -1..65535: " + webSocketPort);
        }
        if (metricsPort < -1 || metricsPort > 65535) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--metrics-port must be -1..65535: " + metricsPort);
        }
        requirePositive(readerIdleMillis, "--reader-idle-ms");
        requirePositive(webSocketPingIntervalMillis, "--websocket-ping-interval-ms");
        requirePositive(webSocketPongTimeoutMillis, "--websocket-pong-timeout-ms");
        requirePositive(webSocketMaxMissedPongs, "--websocket-max-missed-pongs");
        if (webSocketPort >= 0 && readerIdleMillis <= webSocketPingIntervalMillis + webSocketPongTimeoutMillis) {
            // Or a quiet client that answers every ping would be closed.
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--reader-idle-ms must exceed --websocket-ping-interval-ms plus --websocket-pong-timeout-ms");
        }
        requirePositive(firstMessageMillis, "--first-message-timeout-ms");
        requirePositive(maxAgeMillis, "--max-age-ms");
        requirePositive(minPingIntervalMillis, "--min-ping-interval-ms");
        requirePositive(maxPingStrikes, "--max-ping-strikes");
        requirePositive(connectionsPerAddressPerSecond, "--connections-per-address");
        requirePositive(messagesPerConnectionPerSecond, "--messages-per-connection");
        requirePositive(clusterSize, "--cluster-size");
        requirePositive(slowConsumerMillis, "--slow-consumer-timeout-ms");
        requirePositive(closesPer100Millis, "--close-rate-per-100ms");
        if (maxPendingBytes <= 64 * 1024) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--max-pending-bytes must be above the 64 KiB high water mark: " + maxPendingBytes);
        }
        if (lameDuckMillis < 0 || lameDuckMillis > Frame.MAX_RECONNECT_WINDOW_MILLIS) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--lame-duck-ms must be 0.." + Frame.MAX_RECONNECT_WINDOW_MILLIS + ": " + lameDuckMillis);
        }
        if (maxAgeGraceMillis < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--max-age-grace-ms must not be negative");
        }
        if (maxFrameBytes < 8) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--max-frame-bytes must be at least 8 (a PING payload)");
        }
    }

    /** The WebSocket endpoint's keepalive settings; its reader-idle handler is the TCP port's. */
    WebSocketKeepAliveHandler.Builder webSocketKeepAlive() {
        return WebSocketKeepAliveHandler.builder()
                .pingInterval(Duration.ofMillis(webSocketPingIntervalMillis))
                .pongTimeout(Duration.ofMillis(webSocketPongTimeoutMillis))
                .maxMissedPongs(webSocketMaxMissedPongs);
    }

    private void requirePositive(long value, String option) {
        if (value <= 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), option + " must be positive: " + value);
        }
    }

    /** A bound server. {@link #close()} shuts it down gracefully. */
    public static final class Running implements AutoCloseable {
        final Transport transport = Transport.best();
        final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        final MetricsEndpoint metrics;
        private final EventLoopGroup boss = transport.newGroup(1);
        private final EventLoopGroup workers;
        /** This server's wheels, one per event loop, shared by all its handlers and limiters. */
        private final EventLoopWheels wheels = new EventLoopWheels(Duration.ofMillis(1), 4096);

        private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
        /**
         * The allocator every channel of this server uses, and the one its meters watch: Netty
         * 4.2's default kind (adaptive), one per server so that they count this server's memory.
         */
        private final ByteBufAllocator allocator = new AdaptiveByteBufAllocator();

        private final ClosePacer closePacer;
        private final long lameDuckMillis;
        /** The limit shared with other servers through Redis (--redis), or null. */
        private final RedisLeaseStore sharedLimits;

        private final KeyedRateLimiter<Object> connectionLimiter;
        private final KeyedRateLimiter<Object> messageLimiter;
        private final Channel serverChannel;
        /** The WebSocket endpoint's listening channel, or null when it is off. */
        private final Channel webSocketChannel;

        private Running(DemoServer options) {
            workers = transport.newGroup(options.threads);
            lameDuckMillis = options.lameDuckMillis;
            bindMetrics();
            closePacer = ClosePacer.builder(options.closesPer100Millis, Duration.ofMillis(100))
                    .wheels(wheels)
                    .metrics(registry)
                    .build();
            // The limiters' eviction checks ride on the boss loop's wheel: no extra thread.
            var limiterWheel = wheels.wheelFor(boss.next());
            KeyedRateLimiter.Builder perAddress = KeyedRateLimiter.builder(
                            RateLimit.slidingWindow(options.connectionsPerAddressPerSecond, Duration.ofSeconds(1)),
                            limiterWheel)
                    .name("connections-per-address")
                    .maxKeys(100_000);
            sharedLimits = options.redis == null ? null : connectToRedis(options.redis);
            if (sharedLimits != null) {
                perAddress.sharedThrough(sharedLimits).processes(options.clusterSize);
            }
            connectionLimiter = perAddress.build();
            messageLimiter = KeyedRateLimiter.builder(
                            RateLimit.tokenBucket(options.messagesPerConnectionPerSecond, Duration.ofSeconds(1)),
                            limiterWheel)
                    .name("messages-per-connection")
                    .maxKeys(1_000_000)
                    .build();
            new KeyedRateLimiterMetrics(connectionLimiter).bindTo(registry);
            new KeyedRateLimiterMetrics(messageLimiter).bindTo(registry);
            try {
                ServerBootstrap bootstrap = new ServerBootstrap()
                        .group(boss, workers)
                        .channel(transport.serverChannel())
                        .option(ChannelOption.SO_BACKLOG, 4096)
                        .option(ChannelOption.SO_REUSEADDR, true)
                        .option(ChannelOption.ALLOCATOR, allocator)
                        .childOption(ChannelOption.ALLOCATOR, allocator)
                        .childOption(ChannelOption.TCP_NODELAY, true);
                ServerPipeline pipeline = new ServerPipeline(
                        options, wheels, registry, connections, connectionLimiter, messageLimiter, closePacer);
                serverChannel = bootstrap
                        .clone()
                        .childHandler(pipeline)
                        .bind(options.bind, options.port)
                        .syncUninterruptibly()
                        .channel();
                webSocketChannel = options.webSocketPort < 0
                        ? null
                        : bootstrap
                                .clone()
                                .childHandler(new WebSocketPipeline(
                                        options, pipeline, wheels, registry, messageLimiter, closePacer))
                                .bind(options.bind, options.webSocketPort)
                                .syncUninterruptibly()
                                .channel();
                metrics = options.metricsPort < 0
                        ? null
                        : new MetricsEndpoint(registry, new InetSocketAddress(options.bind, options.metricsPort));
            } catch (Exception e) {
                shutDownLoops();
                if (sharedLimits != null) {
                    sharedLimits.close();
                }
                throw new IllegalStateException("cannot start the server: " + e, e);
            }
        }

        private RedisLeaseStore connectToRedis(String uri) {
            try {
                // The demo refuses to start without its Redis, so that a wrong --redis is seen at once.
                return RedisLeaseStore.builder(uri).failIfUnreachable(true).build();
            } catch (RuntimeException e) {
                shutDownLoops();
                throw new IllegalStateException("--redis: " + e.getMessage(), e);
            }
        }

        private void bindMetrics() {
            new EventLoopWheelsMetrics(wheels).bindTo(registry);
            new NettyEventExecutorMetrics(workers).bindTo(registry);
            if (allocator instanceof ByteBufAllocatorMetricProvider measured) {
                new NettyAllocatorMetrics(measured).bindTo(registry);
            }
            new JvmMemoryMetrics().bindTo(registry);
            new JvmGcMetrics().bindTo(registry);
        }

        /** Returns the address the server listens on. */
        public InetSocketAddress address() {
            return (InetSocketAddress) serverChannel.localAddress();
        }

        /** Returns the address of the WebSocket endpoint, or null when it is off. */
        public InetSocketAddress webSocketAddress() {
            return webSocketChannel == null ? null : (InetSocketAddress) webSocketChannel.localAddress();
        }

        /** Returns the port of the metrics endpoint, or -1 when it is off. */
        public int metricsPort() {
            return metrics == null ? -1 : metrics.address().getPort();
        }

        /** Returns the number of open connections. */
        public int connections() {
            return connections.size();
        }

        /** Stops accepting, says GOODBYE to every connection, closes them and stops the loops. */
        @Override
        public void close() {
            serverChannel.close().syncUninterruptibly();
            if (webSocketChannel != null) {
                webSocketChannel.close().syncUninterruptibly();
            }
            // Lame duck: one GOODBYE (and close) after another over the window, each asking its
            // client to spread its reconnect over the window too, so nobody comes back in a herd.
            Duration window = Duration.ofMillis(lameDuckMillis);
            try {
                closePacer
                        .closeAllOver(
                                connections,
                                window,
                                channel -> WebSocketPipeline.serves(channel)
                                        ? WebSocketPipeline.goodbye("server shutting down")
                                        : Frame.goodbye("server shutting down", lameDuckMillis))
                        .get(lameDuckMillis + 5_000, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                log.warn("lame duck: not every connection closed in time; closing the rest", e);
            }
            connections.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
            if (metrics != null) {
                metrics.close();
            }
            connectionLimiter.close();
            messageLimiter.close();
            if (sharedLimits != null) {
                sharedLimits.close();
            }
            shutDownLoops();
        }

        private void shutDownLoops() {
            workers.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
            boss.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }
}
