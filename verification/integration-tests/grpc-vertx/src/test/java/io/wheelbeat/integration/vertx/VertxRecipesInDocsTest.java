package io.wheelbeat.integration.vertx;

import io.wheelbeat.integration.RecipeInDocs;
import org.junit.jupiter.api.Test;

/** docs/integrations.md shows {@link VertxRecipes} as the tests run it. */
class VertxRecipesInDocsTest {

    @Test
    void theDocumentShowsTheRecipeAsTested() throws Exception {
        RecipeInDocs.assertShown(VertxRecipes.class);
    }
}
