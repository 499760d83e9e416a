# The two commands (see README.md).
.PHONY: run test

run:  ## set everything up and run the product on its embedded defaults
	scripts/run.sh

test:  ## run the whole test suite (what CI runs)
	scripts/test.sh
