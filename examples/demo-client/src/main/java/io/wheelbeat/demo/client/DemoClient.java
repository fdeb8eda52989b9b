package io.wheelbeat.demo.client;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.wheelbeat.core.backoff.BackoffPolicy;
import io.wheelbeat.demo.Transport;
import io.wheelbeat.demo.server.DemoServer;
import io.wheelbeat.netty.reconnect.ReconnectGroup;
import io.wheelbeat.netty.reconnect.ReconnectListener;
import io.wheelbeat.netty.reconnect.ReconnectingClient;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The demo client: many connections to the demo server, each heartbeating and reconnecting with
 * jittered backoff on its own; a status line every few seconds and a summary on exit.
 */
@Command(
        name = "demo-client",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = "Opens many heartbeating, auto-reconnecting connections to the demo server.")
public final class DemoClient implements Runnable {

    private static final BackoffPolicy BACKOFF = BackoffPolicy.exponential(
                    Duration.ofMillis(200), Duration.ofSeconds(10))
            .multiplier(1.6)
            .equalJitter()
            .build();

    @Spec
    CommandSpec spec;

    @Option(names = "--host", description = "Server host (default: ${DEFAULT-VALUE}).")
    String host = "127.0.0.1";

    @Option(names = "--port", description = "Server port (default: ${DEFAULT-VALUE}).")
    int port = 7000;

    @Option(
            names = "--websocket",
            description = "Speak WebSocket to ws://HOST:PORT" + DemoServer.WEBSOCKET_PATH
                    + " (the server's --websocket-port) instead of the frame protocol; pings and pongs are"
                    + " WebSocket's.")
    boolean webSocket;

    @Option(names = "--connections", description = "Connections to keep open (default: ${DEFAULT-VALUE}).")
    int connections = 100;

    @Option(names = "--threads", description = "Event loop threads; 0 for Netty's default (default: ${DEFAULT-VALUE}).")
    int threads = 0;

    @Option(
            names = "--ping-interval-ms",
            description = "Ping after this long without writing, +/-10%% jitter " + "(default: ${DEFAULT-VALUE}).")
    long pingIntervalMillis = 5_000;

    @Option(
            names = "--pong-timeout-ms",
            description = "A pong must come this soon after its ping " + "(default: ${DEFAULT-VALUE}).")
    long pongTimeoutMillis = 3_000;

    @Option(
            names = "--max-missed-pongs",
            description = "Missed pongs in a row that close a connection " + "(default: ${DEFAULT-VALUE}).")
    int maxMissedPongs = 3;

    @Option(
            names = "--data-interval-ms",
            description = "Send a DATA frame this often per connection; " + "0 sends none (default: ${DEFAULT-VALUE}).")
    long dataIntervalMillis = 0;

    @Option(
            names = "--max-concurrent-connects",
            description =
                    "Connection attempts in flight at once, across all " + "connections (default: ${DEFAULT-VALUE}).")
    int maxConcurrentConnects = 64;

    @Option(names = "--status-interval-s", description = "Seconds between status lines (default: ${DEFAULT-VALUE}).")
    int statusIntervalSeconds = 5;

    @Option(
            names = "--duration-s",
            description =
                    "Stop after this many seconds; 0 runs until SIGTERM or Ctrl-C " + "(default: ${DEFAULT-VALUE}).")
    long durationSeconds = 0;

    /** Runs the client from the command line. */
    public static void main(String[] args) {
        System.exit(new CommandLine(new DemoClient()).execute(args));
    }

    @Override
    public void run() {
        validate();
        PrintStream out = System.out;
        ClientStats stats = new ClientStats(connections);
        EventLoopGroup loops = Transport.best().newGroup(threads);
        List<ReconnectingClient> clients = new ArrayList<>(connections);
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch stopped = new CountDownLatch(1);
        DemoServer.onShutdown(stop, stopped);
        try {
            Bootstrap bootstrap = bootstrap(loops, stats);
            ReconnectGroup group = new ReconnectGroup(maxConcurrentConnects);
            for (int i = 0; i < connections; i++) {
                ReconnectingClient client =
                        reconnecting(bootstrap, group, stats).build();
                clients.add(client);
                client.start();
            }
            out.println("demo-client: " + connections + (webSocket ? " WebSocket" : "") + " connections to " + host
                    + ":" + port + " (" + Transport.best() + ")");
            long periods = durationSeconds == 0
                    ? Long.MAX_VALUE
                    : Math.max(1, (durationSeconds + statusIntervalSeconds - 1) / statusIntervalSeconds);
            for (long period = 0; period < periods; period++) {
                long wait = durationSeconds == 0
                        ? statusIntervalSeconds
                        : Math.min(statusIntervalSeconds, durationSeconds - period * statusIntervalSeconds);
                if (stop.await(wait, TimeUnit.SECONDS)) {
                    break;
                }
                out.println(stats.statusLine());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            CompletableFuture.allOf(
                            clients.stream().map(ReconnectingClient::close).toArray(CompletableFuture[]::new))
                    .orTimeout(10, TimeUnit.SECONDS)
                    .exceptionally(e -> null)
                    .join();
            loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
            out.println(stats.summary());
            stopped.countDown();
        }
    }

    /** The bootstrap of every connection: the client pipeline on {@code loops}. */
    Bootstrap bootstrap(EventLoopGroup loops, ClientStats stats) {
        return new Bootstrap()
                .group(loops)
                .channel(Transport.best().clientChannel())
                .option(ChannelOption.TCP_NODELAY, true)
                .handler(new ClientPipeline(this, stats));
    }

    /** The reconnect settings of every connection: jittered backoff from 200 ms to 10 s, shared permits. */
    ReconnectingClient.Builder reconnecting(Bootstrap bootstrap, ReconnectGroup group, ReconnectListener listener) {
        return ReconnectingClient.builder(bootstrap, host, port)
                .backoff(BACKOFF)
                .connectTimeout(Duration.ofSeconds(10))
                .group(group)
                .listener(listener);
    }

    private void validate() {
        CommandLine line = spec.commandLine();
        require(connections > 0, line, "--connections must be positive: " + connections);
        require(port > 0 && port < 65536, line, "--port must be 1..65535: " + port);
        require(pingIntervalMillis > 0, line, "--ping-interval-ms must be positive");
        require(pongTimeoutMillis > 0, line, "--pong-timeout-ms must be positive");
        require(maxMissedPongs > 0, line, "--max-missed-pongs must be positive");
        require(dataIntervalMillis >= 0, line, "--data-interval-ms must not be negative");
        require(maxConcurrentConnects > 0, line, "--max-concurrent-connects must be positive");
        require(statusIntervalSeconds > 0, line, "--status-interval-s must be positive");
        require(durationSeconds >= 0, line, "--duration-s must not be negative");
    }

    private static void require(boolean condition, CommandLine line, String message) {
        if (!condition) {
            throw new CommandLine.ParameterException(line, message);
        }
    }
}
