package io.wheelbeat.integration.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.wheelbeat.spring.boot.autoconfigure.WheelbeatProperties;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.springframework.boot.json.JsonParserFactory;

/**
 * The configuration metadata IDEs complete {@code wheelbeat.*} from is on the class path, as the
 * starter brings it, and complete: one described property per field of
 * {@link WheelbeatProperties} (nested groups walked), none more.
 */
class ConfigurationMetadataTest {

    @Test
    void everyWheelbeatPropertyIsDescribedInTheStartersMetadata() throws IOException {
        Map<String, String> described = new TreeMap<>();
        for (URL url : Collections.list(
                getClass().getClassLoader().getResources("META-INF/spring-configuration-metadata.json"))) {
            try (InputStream in = url.openStream()) {
                Map<String, Object> metadata = JsonParserFactory.getJsonParser()
                        .parseMap(new String(in.readAllBytes(), StandardCharsets.UTF_8));
                @SuppressWarnings("unchecked")
                List<Map<String, Object>> properties = (List<Map<String, Object>>) metadata.get("properties");
                for (Map<String, Object> property : properties) {
                    String name = (String) property.get("name");
                    if (name.startsWith("wheelbeat.")) {
                        described.put(name, (String) property.get("description"));
                    }
                }
            }
        }
        TreeSet<String> expected = new TreeSet<>();
        collect("wheelbeat", WheelbeatProperties.class, expected);
        assertFalse(expected.isEmpty());
        assertEquals(expected, described.keySet());
        described.forEach((name, description) -> {
            assertNotNull(description, name + " has no description");
            assertFalse(description.isBlank(), name + " has a blank description");
        });
    }

    /**
     * The property names of the fields of {@code type} and its superclasses: a nested group for a
     * field of a nested class.
     */
    private static void collect(String prefix, Class<?> type, TreeSet<String> names) {
        for (Class<?> c = type; c != Object.class; c = c.getSuperclass()) {
            for (Field field : c.getDeclaredFields()) {
                if (Modifier.isStatic(field.getModifiers())) {
                    continue;
                }
                String name = prefix + "." + kebab(field.getName());
                if (field.getType().getDeclaringClass() == WheelbeatProperties.class) {
                    collect(name, field.getType(), names);
                } else {
                    names.add(name);
                }
            }
        }
    }

    private static String kebab(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT);
    }
}
