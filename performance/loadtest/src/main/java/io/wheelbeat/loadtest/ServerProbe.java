package io.wheelbeat.loadtest;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.wheelbeat.loadtest.InstrumentedEventLoopGroup.LoopCounters;

/**
 * First handler of every server channel, in front of the idle handler: learns which connection
 * the channel is from its first four bytes (the connection index, big-endian), stamps the
 * arrival of every message in the {@link ConnectionLedger}, and counts traffic on its loop.
 * Passes every message and event on untouched, so the idle handler sees exactly what it would
 * without the probe.
 *
 * <p>One instance per channel; runs on the channel's event loop only.
 */
final class ServerProbe extends ChannelInboundHandlerAdapter {

    private static final int HELLO_BYTES = Integer.BYTES;

    private final ConnectionLedger ledger;
    private final InstrumentedEventLoopGroup serverLoops;
    private LoopCounters loop;
    private int index = -1;
    private int helloValue;
    private int helloBytesSeen;

    ServerProbe(ConnectionLedger ledger, InstrumentedEventLoopGroup serverLoops) {
        this.ledger = ledger;
        this.serverLoops = serverLoops;
    }

    /** The connection index this channel announced, or -1 before its hello is complete. */
    int index() {
        return index;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        loop = serverLoops.counters(ctx.executor());
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        loop.channelsActive++;
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        loop.channelsClosed++;
        ctx.fireChannelInactive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        loop.messages++;
        if (index < 0) {
            if (msg instanceof ByteBuf bytes) {
                readHello(bytes);
            } else if (msg instanceof BinaryWebSocketFrame frame) {
                readHello(frame.content());
            }
        }
        if (index >= 0) {
            ledger.arrived(index, ctx.executor().ticker().nanoTime());
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        loop.readBatches++;
        ctx.fireChannelReadComplete();
    }

    /** Reads the index without consuming it; over TCP it may come in pieces. */
    private void readHello(ByteBuf buf) {
        int from = buf.readerIndex();
        int available = Math.min(buf.readableBytes(), HELLO_BYTES - helloBytesSeen);
        for (int k = 0; k < available; k++) {
            helloValue = (helloValue << 8) | buf.getUnsignedByte(from + k);
        }
        helloBytesSeen += available;
        if (helloBytesSeen == HELLO_BYTES) {
            if (ledger.covers(helloValue)) {
                index = helloValue;
            } else {
                ledger.badHello();
                helloBytesSeen = Integer.MIN_VALUE; // never try again
            }
        }
    }
}
