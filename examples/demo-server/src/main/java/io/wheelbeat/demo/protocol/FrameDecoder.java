package io.wheelbeat.demo.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.TooLongFrameException;
import java.util.List;

/**
 * Decodes frames: one type byte, a 4-byte big-endian payload length, the payload.
 *
 * <p>An unknown type throws {@link CorruptedFrameException}; a length above the maximum (or
 * negative) throws {@link TooLongFrameException} as soon as the header arrives, before any payload
 * is buffered. Either is fatal for the connection: the decoder discards everything after it.
 */
public final class FrameDecoder extends ByteToMessageDecoder {

    /** Bytes before the payload: type and length. */
    public static final int HEADER_BYTES = 5;

    private final int maxPayloadBytes;
    private boolean failed;

    /**
     * @throws IllegalArgumentException if {@code maxPayloadBytes} is negative
     */
    public FrameDecoder(int maxPayloadBytes) {
        if (maxPayloadBytes < 0) {
            throw new IllegalArgumentException("maxPayloadBytes must not be negative: " + maxPayloadBytes);
        }
        this.maxPayloadBytes = maxPayloadBytes;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (failed) {
            in.skipBytes(in.readableBytes());
            return;
        }
        while (in.readableBytes() >= HEADER_BYTES) {
            int start = in.readerIndex();
            int code = in.getUnsignedByte(start);
            FrameType type = FrameType.ofCode(code);
            long length = in.getUnsignedInt(start + 1);
            if (type == null) {
                fail(in);
                throw new CorruptedFrameException("unknown frame type " + code);
            }
            if (length > maxPayloadBytes) {
                fail(in);
                throw new TooLongFrameException(
                        "frame payload of " + length + " bytes exceeds the maximum of " + maxPayloadBytes);
            }
            if (in.readableBytes() < HEADER_BYTES + length) {
                return;
            }
            in.skipBytes(HEADER_BYTES);
            out.add(new Frame(type, in.readRetainedSlice((int) length)));
        }
    }

    private void fail(ByteBuf in) {
        failed = true;
        in.skipBytes(in.readableBytes());
    }
}
