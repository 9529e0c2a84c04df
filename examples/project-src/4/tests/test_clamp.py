import unittest

from calc import clamp


class ClampTest(unittest.TestCase):
    def test_inside(self) -> None:
        self.assertEqual(clamp(5, 0, 10), 5)

    def test_upper_bound_included(self) -> None:
        self.assertEqual(clamp(10, 0, 10), 10)
        self.assertEqual(clamp(11, 0, 10), 10)

    def test_lower_bound(self) -> None:
        self.assertEqual(clamp(-1, 0, 10), 0)


if __name__ == "__main__":
    unittest.main()
