/* toy template for recipe tests: never compiled */
