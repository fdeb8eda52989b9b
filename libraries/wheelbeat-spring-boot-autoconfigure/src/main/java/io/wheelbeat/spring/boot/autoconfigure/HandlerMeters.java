package io.wheelbeat.spring.boot.autoconfigure;

import io.wheelbeat.netty.HandlerBuilder;
import io.wheelbeat.netty.idle.TimeoutCloses;

/**
 * Gives the handler factories of {@link ReactorNettyHandlers} the application's meter registry.
 * No Micrometer type appears here, so that the starter runs on a class path without Micrometer:
 * the one implementation that names it is built only when Micrometer is present.
 */
interface HandlerMeters {

    /** No meters. */
    HandlerMeters NONE = new HandlerMeters() {
        @Override
        public <B extends HandlerBuilder<B>> B count(B builder) {
            return builder;
        }

        @Override
        public TimeoutCloses count(TimeoutCloses closes) {
            return closes;
        }
    };

    /** {@code builder}, recording its meters in the registry if there is one. */
    <B extends HandlerBuilder<B>> B count(B builder);

    /** {@code closes}, counting in the registry if there is one. */
    TimeoutCloses count(TimeoutCloses closes);
}
