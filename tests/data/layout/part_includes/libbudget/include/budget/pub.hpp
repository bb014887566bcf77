#pragma once
// A public header of the fixture library.
