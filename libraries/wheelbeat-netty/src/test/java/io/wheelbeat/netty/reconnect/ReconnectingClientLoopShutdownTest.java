package io.wheelbeat.netty.reconnect;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.wheelbeat.core.backoff.BackoffPolicy;
import io.wheelbeat.netty.reconnect.ReconnectEvent.AttemptScheduled;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/**
 * The client's event loop shuts down while the client waits to retry (its timer will never fire):
 * what {@link ReconnectingClient#start()} and {@link ReconnectingClient#close()} returned completes.
 * A LocalChannel on Netty's {@code DefaultEventLoop}, to an address nobody listens on.
 */
class ReconnectingClientLoopShutdownTest {

    @Test
    void aLoopShutDownWhileWaitingToRetryEndsTheClient() throws Exception {
        DefaultEventLoop loop = new DefaultEventLoop();
        EventLog events = new EventLog();
        ReconnectingClient client = ReconnectingClient.builder(
                        new Bootstrap()
                                .group(loop)
                                .channel(LocalChannel.class)
                                .handler(new ChannelInboundHandlerAdapter()),
                        new LocalAddress(ReconnectingClientLoopShutdownTest.class))
                .backoff(BackoffPolicy.exponential(Duration.ofHours(1), Duration.ofHours(1))
                        .build())
                .listener(events)
                .build();
        CompletableFuture<?> firstConnection = client.start();
        assertNotNull(events.await(AttemptScheduled.class, 1), "the first attempt failed: an hour to wait");
        assertTrue(loop.shutdownGracefully(0, 0, SECONDS).await(10, SECONDS), "loop terminated");

        ExecutionException failed = assertThrows(ExecutionException.class, () -> firstConnection.get(10, SECONDS));
        assertInstanceOf(IllegalStateException.class, failed.getCause());
        assertTrue(client.isClosed());
        client.close().get(10, SECONDS);
    }
}
