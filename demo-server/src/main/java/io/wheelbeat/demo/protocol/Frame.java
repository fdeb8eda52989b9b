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

    /** A GOODBYE carrying {@code reason}. */
    public static Frame goodbye(String reason) {
        return new Frame(FrameType.GOODBYE, Unpooled.copiedBuffer(reason, StandardCharsets.UTF_8));
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
