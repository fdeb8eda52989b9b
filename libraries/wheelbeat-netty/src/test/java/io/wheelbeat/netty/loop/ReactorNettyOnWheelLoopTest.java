package io.wheelbeat.netty.loop;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;

/**
 * Reactor Netty 1.3, unmodified, on the wheel group through its {@code LoopResources}: an HTTP
 * server with an idle timeout closes a kept-alive connection that sends no next request, no
 * earlier than the timeout (its timer is a task on the loop's wheel).
 */
class ReactorNettyOnWheelLoopTest {

    /**
     * Long enough that a loop starved of CPU still reads the request before the timeout: with
     * 300 ms, beside busy loops, the server closed the connection before it answered.
     */
    private static final long IDLE_MILLIS = 2_000;

    @Test
    void anHttpServersIdleTimeoutClosesAQuietKeptAliveConnection() throws Exception {
        EventLoopGroup group = new WheelIoEventLoopGroup(2, NioIoHandler.newFactory());
        LoopResources loops = new LoopResources() {
            @Override
            public EventLoopGroup onServer(boolean useNative) {
                return group;
            }

            @Override
            public Mono<Void> disposeLater(Duration quietPeriod, Duration timeout) {
                return Mono.empty(); // the test shuts the group down itself
            }
        };
        DisposableServer server = HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .runOn(loops, false)
                .idleTimeout(Duration.ofMillis(IDLE_MILLIS))
                .handle((request, response) -> response.sendString(Mono.just("ok")))
                .bindNow();
        try (Socket socket = new Socket("127.0.0.1", server.port())) {
            socket.setSoTimeout(20_000);
            // Read before the request is sent: the server's idle timer cannot start earlier, however
            // late this thread runs after the response.
            long requestedAt = System.nanoTime();
            socket.getOutputStream()
                    .write("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();
            StringBuilder response = new StringBuilder();
            int b;
            while (!response.toString().endsWith("ok") && (b = in.read()) >= 0) {
                response.append((char) b);
            }
            assertTrue(response.toString().startsWith("HTTP/1.1 200"), "the response: '" + response + "'");
            assertTrue(in.read() < 0, "the server closes the quiet connection");
            long after = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - requestedAt);
            assertTrue(
                    after >= IDLE_MILLIS - 50,
                    "closed " + after + " ms after the request, idle timeout " + IDLE_MILLIS + " ms");
        } finally {
            server.disposeNow();
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).sync();
        }
    }
}
