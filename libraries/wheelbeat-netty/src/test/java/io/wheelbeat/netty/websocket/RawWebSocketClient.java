package io.wheelbeat.netty.websocket;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A WebSocket client written byte by byte from RFC 6455, so that tests can play a peer that
 * completes the opening handshake and then falls silent or misbehaves: it sends only what it is
 * told and reads the server's (never masked) frames until the server closes.
 *
 * <p>One thread at a time.
 */
public final class RawWebSocketClient implements AutoCloseable {

    public static final int TEXT = 0x1;
    public static final int BINARY = 0x2;
    public static final int CLOSE = 0x8;
    public static final int PING = 0x9;
    public static final int PONG = 0xA;
    private static final byte[] MASK = {0x11, 0x22, 0x33, 0x44};

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;

    /**
     * Connects to {@code address} and completes the opening handshake for {@code path}.
     *
     * @param readTimeoutMillis how long a read may block; a longer silence fails the test
     * @throws IOException if the server does not switch protocols
     */
    public RawWebSocketClient(InetSocketAddress address, String path, int readTimeoutMillis) throws IOException {
        socket = new Socket(address.getAddress(), address.getPort());
        socket.setSoTimeout(readTimeoutMillis);
        in = new DataInputStream(socket.getInputStream());
        out = socket.getOutputStream();
        send(("GET " + path + " HTTP/1.1\r\nHost: " + address.getHostString() + "\r\nUpgrade: websocket\r\n"
                        + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                        + "Sec-WebSocket-Version: 13\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        StringBuilder head = new StringBuilder();
        while (head.indexOf("\r\n\r\n") < 0) {
            head.append((char) in.readUnsignedByte());
        }
        if (!head.toString().startsWith("HTTP/1.1 101")) {
            socket.close();
            throw new IOException("the server did not switch protocols: " + head);
        }
    }

    /** A final frame of {@code opcode} carrying {@code payload} (under 64 KiB), masked as a client's must be or not. */
    public static byte[] frame(int opcode, byte[] payload, boolean masked) {
        ByteArrayOutputStream frame = new ByteArrayOutputStream();
        frame.write(0x80 | opcode);
        int maskBit = masked ? 0x80 : 0;
        if (payload.length < 126) {
            frame.write(maskBit | payload.length);
        } else {
            frame.write(maskBit | 126);
            frame.write(payload.length >>> 8);
            frame.write(payload.length);
        }
        if (masked) {
            frame.writeBytes(MASK);
        }
        for (int i = 0; i < payload.length; i++) {
            frame.write(masked ? payload[i] ^ MASK[i % 4] : payload[i]);
        }
        return frame.toByteArray();
    }

    /** Only the masked header of a final frame announcing {@code length} (at least 126) payload bytes. */
    public static byte[] header(int opcode, long length) {
        ByteBuffer header = ByteBuffer.allocate(length < 65536 ? 8 : 14).put((byte) (0x80 | opcode));
        if (length < 65536) { // lengths take their shortest encoding, or the frame is malformed
            header.put((byte) (0x80 | 126)).putShort((short) length);
        } else {
            header.put((byte) (0x80 | 127)).putLong(length);
        }
        return header.put(MASK).array();
    }

    /** Writes {@code bytes} as they are. */
    public void send(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** Every frame the server sends until it closes the connection. */
    public List<Frame> readUntilEof() throws IOException {
        List<Frame> frames = new ArrayList<>();
        while (true) {
            int first = in.read();
            if (first < 0) {
                return frames;
            }
            try {
                long length = in.readUnsignedByte() & 0x7F;
                if (length == 126) {
                    length = in.readUnsignedShort();
                } else if (length == 127) {
                    length = in.readLong();
                }
                byte[] payload = new byte[Math.toIntExact(length)];
                in.readFully(payload);
                frames.add(new Frame(first & 0x0F, payload));
            } catch (EOFException e) {
                throw new IOException("the connection ended inside a frame after " + frames, e);
            }
        }
    }

    /** The first close frame of {@link #readUntilEof()}. */
    public Frame readUntilClosed() throws IOException {
        List<Frame> frames = readUntilEof();
        return frames.stream()
                .filter(f -> f.opcode() == CLOSE)
                .findFirst()
                .orElseThrow(() -> new IOException("no close frame before the end: " + frames));
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** One frame from the server. */
    public record Frame(int opcode, byte[] payload) {

        /** The payload as one big-endian long (a ping id). */
        public long longPayload() {
            if (payload.length != Long.BYTES) {
                throw new IllegalStateException("payload of " + payload.length + " bytes: " + this);
            }
            return ByteBuffer.wrap(payload).getLong();
        }

        /** A close frame's status code. */
        public int closeStatus() {
            return (payload[0] & 0xFF) << 8 | payload[1] & 0xFF;
        }

        /** A close frame's reason. */
        public String closeReason() {
            return new String(payload, 2, payload.length - 2, StandardCharsets.UTF_8);
        }

        @Override
        public String toString() {
            return opcode == CLOSE
                    ? "close(" + closeStatus() + ", " + closeReason() + ")"
                    : "frame(opcode " + opcode + ", " + payload.length + " bytes)";
        }
    }
}
