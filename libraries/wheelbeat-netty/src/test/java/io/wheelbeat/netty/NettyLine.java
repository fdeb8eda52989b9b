package io.wheelbeat.netty;

import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalIoHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.wheelbeat.netty.internal.LoopClocks;
import org.junit.jupiter.api.Assumptions;

/**
 * The Netty line the tests run on (4.2, or 4.1 in module netty41-tests) and event loops for
 * either: these tests are compiled against 4.2, so a test that runs on 4.1 too must not touch a
 * 4.2-only class (IoHandler, MultiThreadIoEventLoopGroup) there.
 */
public final class NettyLine {

    /** Whether Netty is 4.2 or later. */
    public static final boolean IS_4_2 = LoopClocks.nettyHasTickers();

    /**
     * Whether Netty's own {@code IdleStateHandler} follows EmbeddedChannel's virtual time, so that
     * tests can compare with it: from 4.2 (its loop's ticker); Netty 4.1's reads System.nanoTime().
     */
    public static final boolean NETTYS_IDLE_HANDLER_IN_VIRTUAL_TIME = IS_4_2;

    private NettyLine() {}

    /** Skips the calling test, saying why, unless Netty is 4.2 or later. */
    public static void assume42(String why) {
        Assumptions.assumeTrue(IS_4_2, () -> "needs Netty 4.2: " + why);
    }

    /** NIO event loops: 4.2's IoHandler group, or 4.1's NioEventLoopGroup. */
    @SuppressWarnings("deprecation") // NioEventLoopGroup: deprecated in 4.2, the only one 4.1 has
    public static EventLoopGroup nio(int threads) {
        return IS_4_2
                ? new MultiThreadIoEventLoopGroup(threads, NioIoHandler.newFactory())
                : new NioEventLoopGroup(threads);
    }

    /** Event loops for LocalChannel: 4.2's IoHandler group, or 4.1's DefaultEventLoopGroup. */
    public static EventLoopGroup local(int threads) {
        return IS_4_2
                ? new MultiThreadIoEventLoopGroup(threads, LocalIoHandler.newFactory())
                : new DefaultEventLoopGroup(threads);
    }
}
