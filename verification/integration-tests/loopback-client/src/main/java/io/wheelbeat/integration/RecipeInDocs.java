package io.wheelbeat.integration;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Keeps a recipe class and docs/integrations.md the same: the class's source file, whole, must
 * appear in the document as one code block, so that what the document shows is what the
 * integration tests run (doc-examples compiles the document's blocks as well). The paths come
 * from the build (surefire's {@code wheelbeat.it.test-sources} and {@code wheelbeat.it.integrations-doc}).
 */
public final class RecipeInDocs {

    private RecipeInDocs() {}

    /**
     * Throws {@link AssertionError} unless the source of {@code recipe} is shown whole in
     * docs/integrations.md.
     *
     * @param recipe a class in this module's test sources
     * @throws IOException if a file cannot be read
     */
    public static void assertShown(Class<?> recipe) throws IOException {
        Path source = Path.of(System.getProperty("wheelbeat.it.test-sources"))
                .resolve(recipe.getName().replace('.', '/') + ".java");
        Path doc = Path.of(System.getProperty("wheelbeat.it.integrations-doc"));
        String code = Files.readString(source).strip();
        if (!Files.readString(doc).contains("```java\n" + code + "\n```")) {
            throw new AssertionError(doc.normalize() + " does not show " + source.normalize()
                    + " as it is, in one ```java block: copy the class into the document again");
        }
    }
}
