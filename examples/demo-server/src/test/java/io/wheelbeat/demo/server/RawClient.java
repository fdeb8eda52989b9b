package io.wheelbeat.demo.server;

import io.wheelbeat.demo.protocol.FrameType;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** A blocking socket that speaks the demo protocol byte by byte, for tests that misbehave on purpose. */
final class RawClient implements AutoCloseable {

    /** A frame as read off the wire. */
    record WireFrame(int type, byte[] payload) {
        /** A GOODBYE's reason: the text after its 4-byte reconnect window. */
        String goodbyeReason() {
            return new String(payload, 4, payload.length - 4, StandardCharsets.UTF_8);
        }

        /** A GOODBYE's reconnect window, milliseconds. */
        long reconnectWindowMillis() {
            return ByteBuffer.wrap(payload).getInt() & 0xFFFF_FFFFL;
        }
    }

    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;

    RawClient(InetSocketAddress server) throws IOException {
        socket = new Socket();
        socket.connect(server, 10_000);
        socket.setSoTimeout(30_000);
        in = new DataInputStream(socket.getInputStream());
        out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
    }

    void send(FrameType type, byte[] payload) throws IOException {
        sendRaw(type.code(), payload.length, payload);
    }

    void sendRaw(int type, int declaredLength, byte[] payload) throws IOException {
        buffer(type, declaredLength, payload);
        out.flush();
    }

    private void buffer(int type, int declaredLength, byte[] payload) throws IOException {
        out.writeByte(type);
        out.writeInt(declaredLength);
        out.write(payload);
    }

    void ping(long timestamp) throws IOException {
        send(FrameType.PING, ByteBuffer.allocate(8).putLong(timestamp).array());
    }

    /**
     * Sends {@code count} pings in one write: the server reads them in one go, so it has no unread
     * bytes when it closes (a close with unread bytes resets the connection and loses the goodbye),
     * and no ping is written after the close.
     */
    void pingFlood(int count) throws IOException {
        for (int i = 0; i < count; i++) {
            buffer(FrameType.PING.code(), 8, ByteBuffer.allocate(8).putLong(i).array());
        }
        out.flush();
    }

    /** Reads one frame; blocks up to the socket timeout. */
    WireFrame read() throws IOException {
        int type = in.readUnsignedByte();
        int length = in.readInt();
        byte[] payload = new byte[length];
        in.readFully(payload);
        return new WireFrame(type, payload);
    }

    /**
     * Reads until the server closes the connection and returns the reason of the last GOODBYE
     * seen, or null if none came.
     */
    String readUntilClosed() throws IOException {
        String goodbye = null;
        try {
            while (true) {
                WireFrame frame = read();
                if (frame.type() == FrameType.GOODBYE.code()) {
                    goodbye = frame.goodbyeReason();
                }
            }
        } catch (EOFException | SocketException closed) {
            return goodbye;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
