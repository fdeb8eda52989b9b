package io.wheelbeat.netty.reconnect;

import io.netty.resolver.AddressResolver;
import io.netty.resolver.AddressResolverGroup;
import io.netty.resolver.InetNameResolver;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Promise;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A name resolver the test controls, like a hosts file that can change: it answers from a map,
 * or, when holding, keeps each lookup open until the test answers it (a slow or dead DNS server).
 */
final class TestResolver extends AddressResolverGroup<InetSocketAddress> {

    private final Map<String, InetAddress> hosts = new ConcurrentHashMap<>();
    private final BlockingQueue<Promise<InetAddress>> held = new LinkedBlockingQueue<>();
    private final AtomicInteger lookups = new AtomicInteger();
    private volatile boolean holding;

    void map(String name, InetAddress address) {
        hosts.put(name, address);
    }

    /** From now on, lookups stay open until {@link #answerNext} answers them. */
    void hold() {
        holding = true;
    }

    /** Answers the oldest held lookup with {@code address}, waiting for one to arrive. */
    void answerNext(InetAddress address) throws InterruptedException {
        Promise<InetAddress> lookup = held.poll(20, TimeUnit.SECONDS);
        if (lookup == null) {
            throw new AssertionError("no lookup arrived within 20 s");
        }
        lookup.setSuccess(address);
    }

    /** Lookups held open and not yet answered. */
    int heldLookups() {
        return held.size();
    }

    /** Lookups made so far. */
    int lookups() {
        return lookups.get();
    }

    @Override
    protected AddressResolver<InetSocketAddress> newResolver(EventExecutor executor) {
        return new InetNameResolver(executor) {
            @Override
            protected void doResolve(String name, Promise<InetAddress> promise) {
                lookups.incrementAndGet();
                if (holding) {
                    held.add(promise);
                    return;
                }
                InetAddress address = hosts.get(name);
                if (address == null) {
                    promise.setFailure(new UnknownHostException(name));
                } else {
                    promise.setSuccess(address);
                }
            }

            @Override
            protected void doResolveAll(String name, Promise<List<InetAddress>> promise) {
                throw new UnsupportedOperationException("the client resolves one address per attempt");
            }
        }.asAddressResolver();
    }
}
