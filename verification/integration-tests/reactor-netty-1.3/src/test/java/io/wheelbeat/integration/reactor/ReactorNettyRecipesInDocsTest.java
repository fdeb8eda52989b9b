package io.wheelbeat.integration.reactor;

import io.wheelbeat.integration.RecipeInDocs;
import org.junit.jupiter.api.Test;

/** docs/integrations.md shows {@link ReactorNettyRecipes} as the tests run it. */
class ReactorNettyRecipesInDocsTest {

    @Test
    void theDocumentShowsTheRecipesAsTested() throws Exception {
        RecipeInDocs.assertShown(ReactorNettyRecipes.class);
    }
}
