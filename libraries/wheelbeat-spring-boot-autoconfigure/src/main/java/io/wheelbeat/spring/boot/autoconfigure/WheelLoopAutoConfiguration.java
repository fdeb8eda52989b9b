package io.wheelbeat.spring.boot.autoconfigure;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.http.client.ReactorResourceFactory;

/**
 * {@code wheelbeat.loop.enabled=true} on Netty 4.2: every {@link ReactorResourceFactory} (Boot's
 * makes the server's and WebClient's loops) gets its loops from {@link WheelLoopResources}. The
 * factory is what Boot's Netty web server and WebClient connector take their loops from after
 * every customizer has run, so this is the one place the loops can be replaced. The factory then
 * uses resources of its own instead of Reactor Netty's global ones, and disposes of the loops when
 * it stops. On Netty 4.1 ({@code IoHandlerFactory} missing) this is skipped and
 * {@link NettyVersionCheck} warns.
 */
@AutoConfiguration
@ConditionalOnClass(
        name = {
            "io.netty.channel.IoHandlerFactory",
            "reactor.netty.resources.LoopResources",
            "org.springframework.http.client.ReactorResourceFactory"
        })
@ConditionalOnProperty(prefix = "wheelbeat.loop", name = "enabled", havingValue = "true")
public class WheelLoopAutoConfiguration {

    @Bean
    static BeanPostProcessor wheelbeatLoopResourcesPostProcessor(Environment environment) {
        int threads = environment.getProperty("wheelbeat.loop.threads", Integer.class, 0);
        return new BeanPostProcessor() {
            @Override
            public Object postProcessBeforeInitialization(Object bean, String beanName) {
                if (bean instanceof ReactorResourceFactory factory) {
                    factory.setUseGlobalResources(false);
                    factory.setLoopResourcesSupplier(() -> new WheelLoopResources(threads));
                }
                return bean;
            }
        };
    }
}
