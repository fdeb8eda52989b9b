package io.wheelbeat.spring.boot4;

import io.wheelbeat.ratelimit.redis.RedisLeaseStore;
import io.wheelbeat.spring.boot.autoconfigure.LeaseStoreState;
import io.wheelbeat.spring.boot.autoconfigure.ReactorNettyHandlers;
import io.wheelbeat.spring.boot.autoconfigure.WheelbeatAutoConfiguration;
import java.util.Map;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.http.client.autoconfigure.reactive.ClientHttpConnectorBuilderCustomizer;
import org.springframework.boot.http.client.reactive.ReactorClientHttpConnectorBuilder;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * wheelbeat on Spring Boot 4: hands {@link ReactorNettyHandlers} to the Netty web server
 * ({@code org.springframework.boot.reactor.netty.NettyServerCustomizer}) and to WebClient's
 * Reactor Netty connector, and reports the Redis-shared limiters' health. Skipped on Boot 3,
 * where those types live elsewhere (see wheelbeat-spring-boot3-autoconfigure).
 */
@AutoConfiguration(after = WheelbeatAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.reactor.netty.NettyServerCustomizer")
@ConditionalOnBean(ReactorNettyHandlers.class)
public class WheelbeatBoot4AutoConfiguration {

    @Bean
    NettyServerCustomizer wheelbeatNettyServerCustomizer(ReactorNettyHandlers handlers) {
        return handlers::customize;
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(
            name = {
                "org.springframework.boot.http.client.autoconfigure.reactive.ClientHttpConnectorBuilderCustomizer",
                "org.springframework.web.reactive.function.client.WebClient"
            })
    static class WebClientConfiguration {

        @Bean
        ClientHttpConnectorBuilderCustomizer<ReactorClientHttpConnectorBuilder>
                wheelbeatClientHttpConnectorBuilderCustomizer(ReactorNettyHandlers handlers) {
            return builder -> builder.withHttpClientCustomizer(handlers.clientCustomizer());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(
            name = {
                "org.springframework.boot.health.contributor.HealthIndicator",
                "io.wheelbeat.ratelimit.redis.RedisLeaseStore"
            })
    @ConditionalOnBean(type = "io.wheelbeat.ratelimit.redis.RedisLeaseStore")
    static class HealthConfiguration {

        @Bean
        AbstractHealthIndicator wheelbeatRateLimitStoreHealthIndicator(Map<String, RedisLeaseStore> stores) {
            return new AbstractHealthIndicator("wheelbeat rate-limit store health check failed") {
                @Override
                protected void doHealthCheck(Health.Builder builder) {
                    Map<String, LeaseStoreState> states = LeaseStoreState.probeAll(stores);
                    states.forEach((name, state) -> builder.withDetail(name, state.description()));
                    builder.status(
                            LeaseStoreState.anyDecidesByFailurePolicy(states)
                                    ? new Status(LeaseStoreState.DEGRADED)
                                    : Status.UP);
                }
            };
        }
    }
}
