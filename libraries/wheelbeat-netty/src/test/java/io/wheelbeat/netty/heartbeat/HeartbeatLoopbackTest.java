package io.wheelbeat.netty.heartbeat;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LineBasedFrameDecoder;
import io.netty.handler.codec.string.StringDecoder;
import io.netty.handler.codec.string.StringEncoder;
import io.wheelbeat.netty.EventLoopWheels;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Heartbeats over real TCP on 127.0.0.1 with short intervals. Time bounds are generous waits for
 * something to happen, never the verdict: the verdict is whether the client was closed and why.
 */
class HeartbeatLoopbackTest {

    private static final long WAIT_SECONDS = 30;
    private static final HeartbeatHandler.Factory PINGING = pinging(Duration.ofMillis(500));
    /** For a peer that answers: a pong late by seconds on a busy machine is still no failure. */
    private static final HeartbeatHandler.Factory PINGING_PATIENTLY = pinging(Duration.ofSeconds(5));

    private final EventLoopGroup serverGroup = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final EventLoopGroup clientGroup = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final List<Object> clientEvents = new CopyOnWriteArrayList<>();
    private final CountDownLatch tenPongs = new CountDownLatch(10);
    /** Counted down after the heartbeat handler has seen the client go inactive. */
    private final CountDownLatch clientInactive = new CountDownLatch(1);

    private final AtomicInteger pingsSeenByServer = new AtomicInteger();
    private final List<Channel> serverChildren = new CopyOnWriteArrayList<>();

    private static HeartbeatHandler.Factory pinging(Duration pongTimeout) {
        return HeartbeatHandler.builder()
                .sendPings(Duration.ofMillis(200), ch -> "PING\n", "PONG"::equals)
                .pongTimeout(pongTimeout)
                .maxMissedPongs(3)
                .pingIntervalJitter(0.1)
                .build();
    }

    @AfterEach
    void shutDown() throws InterruptedException {
        clientGroup.shutdownGracefully(0, 1, SECONDS).sync();
        serverGroup.shutdownGracefully(0, 1, SECONDS).sync();
    }

    @Test
    void aClientWhosePingsAreAnsweredStaysConnected() throws Exception {
        HeartbeatHandler.Factory answering = HeartbeatHandler.builder()
                .answerPings("PING"::equals, (ch, ping) -> "PONG\n")
                .build();
        Channel client = connect(startServer(answering::newHandler), PINGING_PATIENTLY);

        assertTrue(tenPongs.await(WAIT_SECONDS, SECONDS), "ten pongs did not come in " + WAIT_SECONDS + " s");
        assertTrue(client.isActive(), "closed after " + clientEvents);
        assertTrue(clientEvents.stream().noneMatch(HeartbeatFailedEvent.class::isInstance));
        List<Boolean> firstFlags = clientEvents.stream()
                .filter(PongReceivedEvent.class::isInstance)
                .map(e -> ((PongReceivedEvent) e).first())
                .toList();
        assertEquals(1, firstFlags.stream().filter(first -> first).count());
        assertTrue(firstFlags.get(0));
        client.close().sync();
        assertEquals(0, pendingTimersAfterInactive(client));
    }

    @Test
    void aPeerWhosePongsAreAlwaysLateIsClosedAfterMaxMissedPongsAndReportsNoPong() throws Exception {
        // Every pong 1.2 pong timeouts after its ping: each one lands while the next ping is awaited.
        long intervalMillis = 200;
        List<Long> pingsMadeAt = new CopyOnWriteArrayList<>();
        Channel client = connect(
                startServer(() -> new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        pingsSeenByServer.incrementAndGet();
                        String pong = "PONG" + ((String) msg).substring(4) + "\n";
                        ctx.executor().schedule(() -> ctx.writeAndFlush(pong), intervalMillis * 6 / 5, MILLISECONDS);
                    }
                }),
                HeartbeatHandler.builder()
                        .sendPings(
                                Duration.ofMillis(intervalMillis),
                                (ch, id) -> {
                                    pingsMadeAt.add(System.nanoTime());
                                    return "PING " + id + "\n";
                                },
                                msg -> ((String) msg).startsWith("PONG"),
                                msg -> Long.parseLong(((String) msg).substring(5)))
                        .pongTimeout(Duration.ofMillis(intervalMillis))
                        .maxMissedPongs(3)
                        .build());

        assertTrue(client.closeFuture().await(WAIT_SECONDS, SECONDS), "still open after " + WAIT_SECONDS + " s");
        long closedAt = System.nanoTime();
        assertTrue(clientEvents.stream().noneMatch(PongReceivedEvent.class::isInstance), "reported " + clientEvents);
        HeartbeatFailedEvent failed = clientEvents.stream()
                .filter(HeartbeatFailedEvent.class::isInstance)
                .map(HeartbeatFailedEvent.class::cast)
                .findFirst()
                .orElseThrow();
        assertEquals(3, failed.missedPongs());
        assertEquals(3, pingsMadeAt.size(), "one ping per missed pong");
        // Three pong timeouts after the first ping, never sooner.
        long closedAfterFirstPing = closedAt - pingsMadeAt.get(0);
        assertTrue(
                closedAfterFirstPing >= MILLISECONDS.toNanos(3 * intervalMillis),
                "closed " + closedAfterFirstPing / 1_000_000 + " ms after the first ping");
        for (Channel child : serverChildren) {
            assertTrue(child.closeFuture().await(WAIT_SECONDS, SECONDS), "server side never saw the close");
        }
        assertEquals(3, pingsSeenByServer.get());
        assertEquals(0, pendingTimersAfterInactive(client));
    }

    @Test
    void aClientWhosePingsAreSwallowedIsClosedAfterThreeMissedPongs() throws Exception {
        Channel client = connect(
                startServer(() -> new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        pingsSeenByServer.incrementAndGet();
                    }
                }),
                PINGING);

        assertTrue(client.closeFuture().await(WAIT_SECONDS, SECONDS), "still open after " + WAIT_SECONDS + " s");
        HeartbeatFailedEvent failed = clientEvents.stream()
                .filter(HeartbeatFailedEvent.class::isInstance)
                .map(HeartbeatFailedEvent.class::cast)
                .findFirst()
                .orElseThrow();
        assertEquals(3, failed.missedPongs());
        assertTrue(clientEvents.stream().noneMatch(PongReceivedEvent.class::isInstance));
        for (Channel child : serverChildren) {
            assertTrue(child.closeFuture().await(WAIT_SECONDS, SECONDS), "server side never saw the close");
        }
        assertEquals(3, pingsSeenByServer.get(), "one ping per missed pong");
        assertEquals(0, pendingTimersAfterInactive(client));
    }

    private InetSocketAddress startServer(Supplier<ChannelHandler> heartbeatSide) throws InterruptedException {
        Channel server = new ServerBootstrap()
                .group(serverGroup)
                .channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        serverChildren.add(ch);
                        ch.pipeline()
                                .addLast(
                                        new LineBasedFrameDecoder(64),
                                        new StringDecoder(StandardCharsets.US_ASCII),
                                        new StringEncoder(StandardCharsets.US_ASCII),
                                        heartbeatSide.get());
                    }
                })
                .bind("127.0.0.1", 0)
                .sync()
                .channel();
        return (InetSocketAddress) server.localAddress();
    }

    private Channel connect(InetSocketAddress server, HeartbeatHandler.Factory pinging) throws InterruptedException {
        return new Bootstrap()
                .group(clientGroup)
                .channel(NioSocketChannel.class)
                .handler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline()
                                .addLast(
                                        new LineBasedFrameDecoder(64),
                                        new StringDecoder(StandardCharsets.US_ASCII),
                                        new StringEncoder(StandardCharsets.US_ASCII),
                                        pinging.newHandler(),
                                        new ChannelInboundHandlerAdapter() {
                                            @Override
                                            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                                                clientEvents.add(evt);
                                                if (evt instanceof PongReceivedEvent) {
                                                    tenPongs.countDown();
                                                }
                                            }

                                            @Override
                                            public void channelInactive(ChannelHandlerContext ctx) {
                                                clientInactive.countDown();
                                            }
                                        });
                    }
                })
                .connect(server)
                .sync()
                .channel();
    }

    private int pendingTimersAfterInactive(Channel ch) throws Exception {
        assertTrue(clientInactive.await(WAIT_SECONDS, SECONDS), "the client never went inactive");
        return ch.eventLoop()
                .submit(() -> EventLoopWheels.shared().wheelFor(ch.eventLoop()).pendingTimers())
                .get();
    }
}
