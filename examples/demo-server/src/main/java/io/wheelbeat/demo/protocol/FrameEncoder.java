package io.wheelbeat.demo.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToByteEncoder;

/** Encodes {@link Frame}s as {@link FrameDecoder} reads them. Stateless and sharable. */
@ChannelHandler.Sharable
public final class FrameEncoder extends MessageToByteEncoder<Frame> {

    /** The one instance; the encoder holds no state. */
    public static final FrameEncoder INSTANCE = new FrameEncoder();

    private FrameEncoder() {
        super(Frame.class);
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, Frame frame, ByteBuf out) {
        ByteBuf payload = frame.content();
        out.writeByte(frame.type().code());
        out.writeInt(payload.readableBytes());
        out.writeBytes(payload, payload.readerIndex(), payload.readableBytes());
    }
}
