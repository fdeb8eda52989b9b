package io.wheelbeat.netty.idle;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Ticker;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.TimerNode;
import io.wheelbeat.core.TimerWheel;
import io.wheelbeat.core.WheelScheduler;
import io.wheelbeat.netty.EventLoopWheels;
import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import org.openjdk.jol.util.ObjectUtils;
import org.openjdk.jol.vm.VM;

/**
 * The heap one connection's handler costs: the objects reachable from it (JOL's sizes), not
 * counting what every handler of the channel shares (the channel, its pipeline and handler
 * contexts, the event loop, its ticker (Netty's, and wheelbeat's view of it: one per loop), its
 * wheel or a shared timer) nor what it shares with the handler of another connection built the
 * same way (settings, meters, singletons). A handler's
 * scheduled tasks, timeout handles and timer nodes count: the handler holds them (a node's links,
 * which lead to its neighbours in the wheel, are not followed). The walk stops at the shared
 * types, which would otherwise lead from one connection's handler to every other's.
 */
final class RetainedHeap {

    private static final List<Class<?>> SHARED_TYPES = List.of(
            Class.class,
            Channel.class,
            ChannelPipeline.class,
            ChannelHandlerContext.class,
            EventExecutor.class,
            Ticker.class,
            LongSupplier.class,
            TimerWheel.class,
            ExecutorDrivenWheel.class,
            WheelScheduler.class,
            handoverScheduler(),
            EventLoopWheels.class,
            Thread.class,
            ClassLoader.class);

    /**
     * The part of a {@link io.wheelbeat.core.WheelTimer} its timeout handles point to (package-private
     * in core): its queue of handles not yet placed would otherwise lead to another connection's.
     */
    private static Class<?> handoverScheduler() {
        try {
            return Class.forName("io.wheelbeat.core.internal.HandoverScheduler");
        } catch (ClassNotFoundException e) {
            throw new AssertionError("the shared timer's internals moved: update RetainedHeap", e);
        }
    }

    /** The objects counted, and their bytes by class (for reports). */
    record Footprint(long bytes, Map<String, Long> bytesByClass) {
        @Override
        public String toString() {
            return bytes + " B " + bytesByClass;
        }
    }

    private RetainedHeap() {}

    /**
     * The heap {@code handler} retains beyond what it shares with {@code sameSettingsElsewhere},
     * a handler built the same way for another connection.
     */
    static Footprint of(Object handler, Object sameSettingsElsewhere) {
        Set<Object> shared = reachable(sameSettingsElsewhere, Collections.emptySet());
        Set<Object> own = reachable(handler, shared);
        long bytes = 0;
        Map<String, Long> byClass = new TreeMap<>();
        for (Object o : own) {
            long size = VM.current().sizeOf(o);
            bytes += size;
            byClass.merge(name(o.getClass()), size, Long::sum);
        }
        return new Footprint(bytes, byClass);
    }

    private static Set<Object> reachable(Object root, Set<Object> excluded) {
        Set<Object> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        ArrayDeque<Object> todo = new ArrayDeque<>();
        todo.push(root);
        while (!todo.isEmpty()) {
            Object o = todo.pop();
            if (excluded.contains(o) || isShared(o) || !seen.add(o)) {
                continue;
            }
            Class<?> type = o.getClass();
            if (type.isArray()) {
                if (!type.getComponentType().isPrimitive()) {
                    for (int i = 0; i < Array.getLength(o); i++) {
                        pushIfNotNull(todo, Array.get(o, i));
                    }
                }
                continue;
            }
            for (Class<?> c = type; c != null; c = c.getSuperclass()) {
                if (c == TimerNode.class) {
                    continue; // its links lead to other owners' timers; the node's own bytes count
                }
                for (Field f : c.getDeclaredFields()) {
                    if (!Modifier.isStatic(f.getModifiers()) && !f.getType().isPrimitive()) {
                        pushIfNotNull(todo, ObjectUtils.value(o, f));
                    }
                }
            }
        }
        return seen;
    }

    private static void pushIfNotNull(ArrayDeque<Object> todo, Object o) {
        if (o != null) {
            todo.push(o);
        }
    }

    private static boolean isShared(Object o) {
        for (Class<?> type : SHARED_TYPES) {
            if (type.isInstance(o)) {
                return true;
            }
        }
        return false;
    }

    private static String name(Class<?> type) {
        String name = type.getName();
        int lambda = name.indexOf("$$Lambda");
        return (lambda < 0 ? name : name.substring(0, lambda) + "$$Lambda").replaceFirst("^.*\\.", "");
    }
}
