// at the top level of src/: refused
