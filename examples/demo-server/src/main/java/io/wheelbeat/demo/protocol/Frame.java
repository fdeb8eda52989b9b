package io.wheelbeat.demo.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * One frame of the demo protocol: a type and a payload. Reference counted through its payload;
 * whoever ends a frame's journey releases it.
 */
public final class Frame extends DefaultByteBufHolder {

    private final FrameType type;

    /** Creates a frame that owns {@code payload}. */
    public Frame(FrameType type, ByteBuf payload) {
        super(payload);
        this.type = Objects.requireNonNull(type, "type");
    }

    /** The GOODBYE reason of a server closing a connection that pinged too often. */
    public static final String TOO_MANY_PINGS = "too many pings";

    /** A PING carrying {@code pingId}, which its PONG echoes. */
    public static Frame ping(long pingId) {
        return new Frame(FrameType.PING, Unpooled.buffer(8).writeLong(pingId));
    }

    /** The most a GOODBYE's reconnect window can say: its 4 bytes, unsigned. */
    public static final long MAX_RECONNECT_WINDOW_MILLIS = 0xFFFF_FFFFL;

    /** A GOODBYE carrying {@code reason} and no reconnect window. */
    public static Frame goodbye(String reason) {
        return goodbye(reason, 0);
    }

    /**
     * A GOODBYE carrying {@code reason} that asks the peer to spread its reconnect uniformly over
     * {@code reconnectWindowMillis} (0: no window): 4 bytes of window, then the reason.
     *
     * @throws IllegalArgumentException unless {@code 0 <= reconnectWindowMillis <= }
     *     {@link #MAX_RECONNECT_WINDOW_MILLIS}
     */
    public static Frame goodbye(String reason, long reconnectWindowMillis) {
        if (reconnectWindowMillis < 0 || reconnectWindowMillis > MAX_RECONNECT_WINDOW_MILLIS) {
            throw new IllegalArgumentException("reconnect window out of range: " + reconnectWindowMillis + " ms");
        }
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        return new Frame(
                FrameType.GOODBYE,
                Unpooled.buffer(4 + text.length)
                        .writeInt((int) reconnectWindowMillis)
                        .writeBytes(text));
    }

    /** A DATA frame carrying a copy of {@code text}. */
    public static Frame data(String text) {
        return new Frame(FrameType.DATA, Unpooled.copiedBuffer(text, StandardCharsets.UTF_8));
    }

    /** Returns the frame type. */
    public FrameType type() {
        return type;
    }

    /** Returns whether this frame has the given type. */
    public boolean is(FrameType expected) {
        return type == expected;
    }

    /** Returns the PING/PONG ping id payload, or -1 if the payload is not 8 bytes. */
    public long pingId() {
        ByteBuf payload = content();
        return payload.readableBytes() == 8 ? payload.getLong(payload.readerIndex()) : -1;
    }

    /** Returns a GOODBYE's reason, or "" if the payload is too short to hold one. */
    public String goodbyeReason() {
        ByteBuf payload = content();
        return payload.readableBytes() < 4
                ? ""
                : payload.toString(payload.readerIndex() + 4, payload.readableBytes() - 4, StandardCharsets.UTF_8);
    }

    /** Returns a GOODBYE's reconnect window in milliseconds, or 0 if it has none. */
    public long reconnectWindowMillis() {
        ByteBuf payload = content();
        return payload.readableBytes() < 4 ? 0 : payload.getUnsignedInt(payload.readerIndex());
    }

    /** Returns the payload as UTF-8 text. */
    public String text() {
        return content().toString(StandardCharsets.UTF_8);
    }

    @Override
    public Frame replace(ByteBuf content) {
        return new Frame(type, content);
    }

    @Override
    public String toString() {
        return "Frame(" + type + ", " + content().readableBytes() + " bytes)";
    }
}
