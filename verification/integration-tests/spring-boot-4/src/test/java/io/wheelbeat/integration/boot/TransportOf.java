package io.wheelbeat.integration.boot;

import io.netty.channel.EventLoopGroup;
import java.util.List;

/**
 * The transport of a Netty 4.2 event loop group, by its IoHandler's class name, asked through
 * {@code IoEventLoopGroup.isIoType} by reflection so that the class compiles against Netty 4.1 too.
 */
final class TransportOf {

    private static final List<String> HANDLERS = List.of(
            "io.netty.channel.uring.IoUringIoHandler",
            "io.netty.channel.epoll.EpollIoHandler",
            "io.netty.channel.kqueue.KQueueIoHandler",
            "io.netty.channel.nio.NioIoHandler",
            "io.netty.channel.local.LocalIoHandler");

    private TransportOf() {}

    static String of(EventLoopGroup group) throws ReflectiveOperationException {
        for (String name : HANDLERS) {
            Class<?> handler;
            try {
                handler = Class.forName(name);
            } catch (ClassNotFoundException | LinkageError absent) {
                continue; // not on the class path: not this transport
            }
            if ((Boolean) group.getClass().getMethod("isIoType", Class.class).invoke(group, handler)) {
                return name;
            }
        }
        return "unknown: " + group;
    }
}
