package io.wheelbeat.spring.boot.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.core.ratelimit.KeyedRateLimiterMetrics;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.EventLoopWheelsMetrics;
import io.wheelbeat.netty.HandlerBuilder;
import io.wheelbeat.netty.idle.TimeoutCloses;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The part of wheelbeat's auto-configuration that Boot 3 and Boot 4 share: the
 * {@code wheelbeat.*} properties, the {@link ReactorNettyHandlers} built from them (which the
 * Boot 3 and Boot 4 modules hand to the server and to WebClient), the Netty version check, and
 * with Micrometer the meters of the wheels, the handlers and every {@link KeyedRateLimiter} bean.
 */
@AutoConfiguration
@ConditionalOnClass(name = "reactor.netty.http.server.HttpServer")
@EnableConfigurationProperties(WheelbeatProperties.class)
public class WheelbeatAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    ReactorNettyHandlers wheelbeatReactorNettyHandlers(
            WheelbeatProperties properties, ObjectProvider<HandlerMeters> meters) {
        return new ReactorNettyHandlers(properties, meters.getIfAvailable(() -> HandlerMeters.NONE));
    }

    @Bean
    NettyVersionCheck wheelbeatNettyVersionCheck(Environment environment) {
        NettyVersionCheck check = NettyVersionCheck.ofRunningNetty(
                environment.getProperty("wheelbeat.loop.enabled", Boolean.class, false));
        check.log();
        return check;
    }

    /** Meters, when Micrometer is on the class path; Boot's Actuator binds the binders to its registry. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
    static class MetricsConfiguration {

        @Bean
        HandlerMeters wheelbeatHandlerMeters(ObjectProvider<MeterRegistry> registries) {
            return new RegistryMeters(registries.getIfUnique());
        }

        /** {@code wheelbeat.timer.*} of every loop's wheel, tagged {@code wheel=loop-N}. */
        @Bean
        EventLoopWheelsMetrics wheelbeatEventLoopWheelsMetrics() {
            return new EventLoopWheelsMetrics(EventLoopWheels.shared());
        }

        /** {@code wheelbeat.ratelimit.*} of every {@link KeyedRateLimiter} bean, tagged with its name. */
        @Bean
        MeterBinder wheelbeatRateLimiterMetrics(ObjectProvider<KeyedRateLimiter<?>> limiters) {
            return registry ->
                    limiters.orderedStream().forEach(limiter -> new KeyedRateLimiterMetrics(limiter).bindTo(registry));
        }
    }

    /** Handler meters in {@code registry}; none when the application has no (single) registry. */
    private static final class RegistryMeters implements HandlerMeters {
        private final MeterRegistry registry;

        RegistryMeters(MeterRegistry registry) {
            this.registry = registry;
        }

        @Override
        public <B extends HandlerBuilder<B>> B count(B builder) {
            return registry == null ? builder : builder.metrics(registry);
        }

        @Override
        public TimeoutCloses count(TimeoutCloses closes) {
            return registry == null ? closes : closes.withMetrics(registry);
        }
    }
}
