package io.wheelbeat.spring.boot.autoconfigure;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.wheelbeat.netty.loop.WheelIoEventLoopGroup;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.netty.resources.LoopResources;

/**
 * Reactor Netty's {@link LoopResources} on one {@link WheelIoEventLoopGroup}: the server's
 * acceptor and connections and the clients' connections all run on its loops, as they share
 * Reactor Netty's default loops, so every task scheduled on them (Reactor Netty's idle and
 * response timeouts, Netty's handlers, wheelbeat's) is on the loop's wheel. The group runs on the
 * transport Reactor Netty would pick itself (io_uring, epoll, kqueue, else NIO, as its
 * {@code reactor.netty.native} setting allows); Reactor Netty picks the channel type to match the
 * group. Needs Netty 4.2.
 *
 * <p>Thread-safe.
 */
final class WheelLoopResources implements LoopResources {

    private static final Logger log = LoggerFactory.getLogger(WheelLoopResources.class);
    /** Netty 4.2's native transports, in the order Reactor Netty prefers them. */
    private static final List<String> NATIVE_HANDLERS = List.of(
            "io.netty.channel.uring.IoUringIoHandler",
            "io.netty.channel.epoll.EpollIoHandler",
            "io.netty.channel.kqueue.KQueueIoHandler");

    private final WheelIoEventLoopGroup loops;

    /** {@code threads} loops, or Reactor Netty's default count for 0. */
    WheelLoopResources(int threads) {
        IoHandlerFactory transport = reactorNettysTransport();
        int count = threads > 0 ? threads : LoopResources.DEFAULT_IO_WORKER_COUNT;
        this.loops = new WheelIoEventLoopGroup(count, new DefaultThreadFactory("reactor-http-wheel", true), transport);
        log.info("Reactor Netty runs on a WheelIoEventLoopGroup: {} loops, {}", count, transport);
    }

    @Override
    public EventLoopGroup onServer(boolean useNative) {
        return loops;
    }

    @Override
    public boolean daemon() {
        return true;
    }

    @Override
    public boolean isDisposed() {
        return loops.isShuttingDown();
    }

    @Override
    public Mono<Void> disposeLater(Duration quietPeriod, Duration timeout) {
        return Mono.create(
                sink -> loops.shutdownGracefully(quietPeriod.toMillis(), timeout.toMillis(), TimeUnit.MILLISECONDS)
                        .addListener(done -> sink.success()));
    }

    /**
     * The transport of the loops Reactor Netty makes by default, asked of Reactor Netty itself: a
     * one-loop group of its default kind, made and shut down at once (its thread never starts).
     */
    static IoHandlerFactory reactorNettysTransport() {
        LoopResources reactors = LoopResources.create("wheelbeat-transport-probe", 1, true);
        try {
            EventLoopGroup probe = reactors.onServer(LoopResources.DEFAULT_NATIVE);
            if (probe instanceof IoEventLoopGroup group) {
                for (String name : NATIVE_HANDLERS) {
                    Class<? extends IoHandler> handler = loadHandler(name);
                    if (handler != null && group.isIoType(handler)) {
                        return (IoHandlerFactory)
                                handler.getMethod("newFactory").invoke(null);
                    }
                }
            }
            return NioIoHandler.newFactory();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot make the IoHandlerFactory of Reactor Netty's transport", e);
        } finally {
            // A zero timeout fails the start whenever the shutdown is not done at once (seen on a busy machine).
            reactors.disposeLater(Duration.ZERO, Duration.ofSeconds(10)).block(Duration.ofSeconds(15));
        }
    }

    private static Class<? extends IoHandler> loadHandler(String name) {
        try {
            return Class.forName(name, false, WheelLoopResources.class.getClassLoader())
                    .asSubclass(IoHandler.class);
        } catch (ClassNotFoundException | LinkageError e) {
            return null; // that transport's classes are not on the class path
        }
    }

    @Override
    public String toString() {
        return "WheelLoopResources(" + loops + ")";
    }
}
