package io.wheelbeat.netty.websocket;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The JDK's own WebSocket client ({@code java.net.http.WebSocket}), which answers pings by itself,
 * recording what it receives: pings counted, whole text messages queued, the close status queued.
 *
 * <p>Thread-safe: the JDK's threads record, the test reads.
 */
public final class JdkWebSocketClient implements WebSocket.Listener, AutoCloseable {

    /** Pings received (each answered by the JDK's client with its pong). */
    public final AtomicInteger pings = new AtomicInteger();
    /** Text messages received, whole. */
    public final BlockingQueue<String> texts = new LinkedBlockingQueue<>();
    /** The status of the server's close frame, once it comes. */
    public final BlockingQueue<Integer> closed = new LinkedBlockingQueue<>();
    /** The reason of the server's close frame, once it comes. */
    public final BlockingQueue<String> closeReasons = new LinkedBlockingQueue<>();

    private final StringBuilder text = new StringBuilder();
    private final WebSocket webSocket;

    /** Opens a WebSocket to {@code uri}, waiting at most {@code timeoutMillis} for the handshake. */
    public JdkWebSocketClient(URI uri, long timeoutMillis) throws Exception {
        webSocket = HttpClient.newHttpClient()
                .newWebSocketBuilder()
                .buildAsync(uri, this)
                .get(timeoutMillis, TimeUnit.MILLISECONDS);
    }

    /** Sends {@code message} as one text frame, waiting at most {@code timeoutMillis}. */
    public void sendText(String message, long timeoutMillis) throws Exception {
        webSocket.sendText(message, true).get(timeoutMillis, TimeUnit.MILLISECONDS);
    }

    @Override
    public CompletionStage<?> onPing(WebSocket ws, ByteBuffer message) {
        pings.incrementAndGet();
        ws.request(1);
        return null;
    }

    @Override
    public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
        text.append(data);
        if (last) {
            texts.add(text.toString());
            text.setLength(0);
        }
        ws.request(1);
        return null;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
        closeReasons.add(reason);
        closed.add(statusCode);
        return null;
    }

    /** Drops the connection at once. */
    @Override
    public void close() {
        webSocket.abort();
    }
}
