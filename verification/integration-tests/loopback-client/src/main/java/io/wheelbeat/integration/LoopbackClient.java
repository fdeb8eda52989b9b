package io.wheelbeat.integration;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/**
 * A plain blocking socket client on loopback that says exactly what a test tells it (bytes, an
 * HTTP/1.1 request, an HTTP/2 preface) and measures when the server closes the connection; the
 * integration tests' client where a framework's own client would hide the moment of the close.
 * One thread at a time.
 */
public final class LoopbackClient implements AutoCloseable {

    private final Socket socket = new Socket();
    private final long connectingAt;

    public LoopbackClient(int port) throws IOException {
        socket.setTcpNoDelay(true);
        connectingAt = System.nanoTime();
        socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
    }

    /**
     * The clock reading ({@link System#nanoTime()}) taken just before connecting: no server timer
     * of this connection starts earlier, however late this thread runs after the handshake.
     */
    public long connectingAt() {
        return connectingAt;
    }

    /** Sends {@code text} and returns the clock reading taken just before. */
    public long send(String text) throws IOException {
        return send(text.getBytes(StandardCharsets.ISO_8859_1));
    }

    /** Sends {@code bytes} and returns the clock reading taken just before. */
    public long send(byte[] bytes) throws IOException {
        long at = System.nanoTime();
        socket.getOutputStream().write(bytes);
        socket.getOutputStream().flush();
        return at;
    }

    /** Reads until what was read ends with {@code end}; fails if the server closes first. */
    public String readUntil(String end) throws IOException {
        socket.setSoTimeout(5_000);
        StringBuilder read = new StringBuilder();
        InputStream in = socket.getInputStream();
        while (!read.toString().endsWith(end)) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("closed by the server after " + read);
            }
            read.append((char) b);
        }
        return read.toString();
    }

    /**
     * Waits up to {@code millis} for the server to close the connection (end of stream or reset)
     * and returns the clock reading then, or -1 if it was still open; data sent meanwhile is
     * skipped.
     */
    public long awaitClose(long millis) throws IOException {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        InputStream in = socket.getInputStream();
        while (true) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                return -1;
            }
            socket.setSoTimeout((int) left);
            try {
                if (in.read() < 0) {
                    return System.nanoTime();
                }
            } catch (SocketTimeoutException e) {
                return -1;
            } catch (IOException reset) {
                return System.nanoTime();
            }
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
