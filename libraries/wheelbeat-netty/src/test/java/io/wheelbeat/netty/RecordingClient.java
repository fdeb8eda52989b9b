package io.wheelbeat.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.ReferenceCountUtil;
import java.util.List;

/**
 * A Netty client over real TCP for socket tests: the given handlers (codec and keepalive), then
 * one that records every user event into a thread-safe list and releases what it reads.
 */
public final class RecordingClient {

    private RecordingClient() {}

    /**
     * Connects to 127.0.0.1:{@code port} and returns the channel once connected.
     *
     * @param events where the user events go; read from the test thread, so thread-safe
     */
    public static Channel connect(EventLoopGroup group, int port, List<Object> events, ChannelHandler... handlers)
            throws InterruptedException {
        return new Bootstrap()
                .group(group)
                .channel(NioSocketChannel.class)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(handlers).addLast(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                                events.add(evt);
                            }

                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                ReferenceCountUtil.release(msg);
                            }
                        });
                    }
                })
                .connect("127.0.0.1", port)
                .sync()
                .channel();
    }
}
