package io.wheelbeat.netty.http2;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * HTTP/2 frames as bytes on the wire (RFC 9113 section 4.1), written and read by hand so that
 * tests can play a peer that misbehaves, independently of Netty's own frame writer.
 */
final class Http2Wire {

    static final int DATA = 0;
    static final int HEADERS = 1;
    static final int SETTINGS = 4;
    static final int PING = 6;
    static final int GOAWAY = 7;
    static final int FLAG_ACK = 1;
    static final int FLAG_END_STREAM = 1;
    static final int FLAG_END_HEADERS = 4;
    static final long NO_ERROR = 0;
    static final long FRAME_SIZE_ERROR = 6;
    static final long ENHANCE_YOUR_CALM = 0xb;

    private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    /** HPACK: GET, http, /, from the static table, and a literal authority "localhost". */
    private static final byte[] GET_HEADERS = {
        (byte) 0x82, (byte) 0x86, (byte) 0x84, 0x41, 9, 'l', 'o', 'c', 'a', 'l', 'h', 'o', 's', 't'
    };

    private Http2Wire() {}

    /** One frame as read. */
    record Frame(int type, int flags, int streamId, byte[] payload) {

        long pingContent() {
            long content = 0;
            for (int i = 0; i < 8; i++) {
                content = content << 8 | (payload[i] & 0xFF);
            }
            return content;
        }

        int goAwayLastStreamId() {
            return (int) (readInt(0) & 0x7FFF_FFFF);
        }

        long goAwayErrorCode() {
            return readInt(4);
        }

        String goAwayDebugData() {
            return new String(payload, 8, payload.length - 8, StandardCharsets.US_ASCII);
        }

        boolean has(int flag) {
            return (flags & flag) != 0;
        }

        private long readInt(int at) {
            return (payload[at] & 0xFFL) << 24
                    | (payload[at + 1] & 0xFFL) << 16
                    | (payload[at + 2] & 0xFFL) << 8
                    | payload[at + 3] & 0xFFL;
        }

        @Override
        public String toString() {
            return switch (type) {
                case PING -> "PING" + (has(FLAG_ACK) ? "-ACK " : " ") + Long.toHexString(pingContent());
                case GOAWAY ->
                    "GOAWAY(last=" + goAwayLastStreamId() + ", error=" + goAwayErrorCode() + ", " + goAwayDebugData()
                            + ")";
                default -> "frame(type=" + type + ", flags=" + flags + ", stream=" + streamId + ")";
            };
        }
    }

    static byte[] frame(int type, int flags, int streamId, byte[] payload) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(payload.length >>> 16);
        out.write(payload.length >>> 8);
        out.write(payload.length);
        out.write(type);
        out.write(flags);
        out.write(streamId >>> 24);
        out.write(streamId >>> 16);
        out.write(streamId >>> 8);
        out.write(streamId);
        out.writeBytes(payload);
        return out.toByteArray();
    }

    /** The client's connection preface and an empty SETTINGS frame. */
    static byte[] clientPreface() {
        return concat(PREFACE, frame(SETTINGS, 0, 0, new byte[0]));
    }

    static byte[] ping(long content, boolean ack) {
        byte[] payload = new byte[8];
        for (int i = 7; i >= 0; i--) {
            payload[i] = (byte) content;
            content >>>= 8;
        }
        return frame(PING, ack ? FLAG_ACK : 0, 0, payload);
    }

    /** A GET request on {@code streamId}, ended (the stream stays open until the response ends). */
    static byte[] get(int streamId) {
        return frame(HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, streamId, GET_HEADERS);
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }

    static ByteBuf buf(byte[]... parts) {
        return Unpooled.wrappedBuffer(concat(parts));
    }

    /** Parses every whole frame in {@code bytes}. */
    static List<Frame> parse(byte[] bytes) {
        List<Frame> frames = new ArrayList<>();
        try {
            DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(bytes));
            Frame frame;
            while ((frame = read(in)) != null) {
                frames.add(frame);
            }
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return frames;
    }

    /** Reads one frame, or returns null at the end of the stream. */
    static Frame read(InputStream stream) throws IOException {
        DataInputStream in = new DataInputStream(stream);
        int first = in.read();
        if (first < 0) {
            return null;
        }
        try {
            int length = first << 16 | in.readUnsignedByte() << 8 | in.readUnsignedByte();
            int type = in.readUnsignedByte();
            int flags = in.readUnsignedByte();
            int streamId = in.readInt() & 0x7FFF_FFFF;
            byte[] payload = new byte[length];
            in.readFully(payload);
            return new Frame(type, flags, streamId, payload);
        } catch (EOFException e) {
            return null;
        }
    }
}
