package io.wheelbeat.integration.grpc;

import io.wheelbeat.integration.RecipeInDocs;
import org.junit.jupiter.api.Test;

/** docs/integrations.md shows {@link GrpcRecipes} as the tests run it. */
class GrpcRecipesInDocsTest {

    @Test
    void theDocumentShowsTheRecipeAsTested() throws Exception {
        RecipeInDocs.assertShown(GrpcRecipes.class);
    }
}
