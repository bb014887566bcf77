#pragma once
// A private header of the fixture library (domain base).
