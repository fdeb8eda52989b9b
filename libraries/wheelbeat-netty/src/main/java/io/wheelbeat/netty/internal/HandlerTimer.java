package io.wheelbeat.netty.internal;

import io.wheelbeat.core.TimerNode;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * A handler's timer: a node held in a final field of its owner and re-armed for the channel's
 * life, that tells its owner which timer expired.
 *
 * <p>Internal: not part of wheelbeat's API. Event loop only.
 */
public final class HandlerTimer extends TimerNode {
    private final Consumer<HandlerTimer> onExpiry;

    public HandlerTimer(Consumer<HandlerTimer> onExpiry) {
        this.onExpiry = Objects.requireNonNull(onExpiry, "onExpiry");
    }

    @Override
    protected void expire() {
        onExpiry.accept(this);
    }
}
